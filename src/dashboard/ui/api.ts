/**
 * @module The page's requests to the dashboard's API: the token kept in this tab's sessionStorage and sent in a
 * header (never a cookie, so another site cannot make the browser send it), JSON reads of the snapshot and lookups,
 * and action POSTs.
 */
import type { ActionResult } from '../model.js';

const TOKEN_KEY = 'oncely-dashboard-token';
const base = document.documentElement.dataset.base ?? '';

/**
 * The token lives in this tab's sessionStorage and travels in a header, never in a cookie: a page of another
 * site cannot make the browser send it. A `#token=…` fragment (the CLI prints such a link) is moved there and
 * removed from the address bar, so it is not left in the history.
 */
export function adoptTokenFromFragment(): void {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (match?.[1] === undefined) return;
  setToken(decodeURIComponent(match[1]));
  history.replaceState(null, '', location.pathname + location.search);
}

export function token(): string {
  return sessionStorage.getItem(TOKEN_KEY) ?? '';
}

export function setToken(value: string): void {
  if (value === '') sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, value);
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const value = token();
  return value === '' ? extra : { ...extra, 'x-oncely-token': value };
}

async function read<T>(response: Response): Promise<T> {
  const body = (await response.json().catch(() => ({}))) as T & { message?: string };
  if (!response.ok) throw new ApiError(response.status, body.message ?? `HTTP ${response.status}`);
  return body;
}

export async function getJson<T>(path: string, query?: Record<string, string>): Promise<T> {
  const search = query === undefined ? '' : `?${new URLSearchParams(query)}`;
  return read<T>(await fetch(`${base}${path}${search}`, { headers: headers(), cache: 'no-store' }));
}

export async function postAction(name: string, body: unknown): Promise<ActionResult> {
  const response = await fetch(`${base}/api/actions/${name}`, {
    method: 'POST',
    headers: headers({ 'content-type': 'application/json' }),
    body: JSON.stringify(body),
  });
  const result = (await response.json().catch(() => ({}))) as Partial<ActionResult>;
  return { ok: response.ok && result.ok === true, message: result.message ?? `HTTP ${response.status}` };
}
