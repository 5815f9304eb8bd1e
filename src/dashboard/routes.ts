/**
 * @module Every route of the dashboard, framework-free (the page, the snapshot and lookup API, actions), each answer
 * with the security headers; the node:http and Fetch handlers only translate to and from it.
 */
import { ACTION_NAMES, type ActionName, actionInput, runAction } from './actions.js';
import {
  checkHost,
  checkJson,
  checkSameOrigin,
  checkToken,
  type DashboardRequest,
  type Refusal,
} from './guard.js';
import { bodyOf, lookUp, storageKeyOf } from './lookup.js';
import type { ResolvedDashboard } from './options.js';
import { pageHtml, SCRIPT, STYLE } from './page.js';
import type { Snapshots } from './snapshot.js';

export interface DashboardResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

const MAX_ACTION_BODY = 65_536;

/** Sent with every answer: the page runs only its own script, is never framed, and leaks nothing in referrers. */
export const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
} as const;

function answer(status: number, type: string, body: string): DashboardResponse {
  return { status, headers: { ...SECURITY_HEADERS, 'content-type': type }, body };
}

const json = (status: number, value: unknown) =>
  answer(status, 'application/json; charset=utf-8', JSON.stringify(value));
const refuse = (refusal: Refusal) => json(refusal.status, { ok: false, message: refusal.message });

/** Every route of the dashboard, framework-free: the node:http and Fetch handlers only translate. */
export async function route(
  options: ResolvedDashboard,
  snapshots: Snapshots,
  request: DashboardRequest,
): Promise<DashboardResponse> {
  const host = checkHost(options, request);
  if (host) return refuse(host);
  const { path, method } = request;
  if (path.startsWith('/api/actions/')) return action(options, request, path.slice('/api/actions/'.length));
  if (method !== 'GET' && method !== 'HEAD')
    return { ...refuse({ status: 405, message: `${method} is not allowed here` }), headers: allow('GET') };
  if (path === '' || path === '/') return answer(200, 'text/html; charset=utf-8', pageHtml(options));
  if (path === '/app.js') return answer(200, 'text/javascript; charset=utf-8', SCRIPT);
  if (path === '/app.css') return answer(200, 'text/css; charset=utf-8', STYLE);
  if (!path.startsWith('/api/')) return refuse({ status: 404, message: `no page ${path}` });
  if (options.readsNeedToken) {
    const token = checkToken(options, request);
    if (token) return refuse(token);
  }
  if (path === '/api/snapshot') return json(200, await snapshots.get());
  if (path === '/api/key' || path === '/api/key/body') {
    const key = storageKeyOf(request.query);
    if (typeof key !== 'string') return refuse({ status: 400, message: key.error });
    if (path === '/api/key') return json(200, await lookUp(options.source, key));
    // The one place a stored body leaves the store: asked for by name, for one key.
    const body = await bodyOf(options.source, key);
    if (body === undefined) return refuse({ status: 404, message: 'no completed record for this key' });
    return json(200, body);
  }
  return refuse({ status: 404, message: `no API ${path}` });
}

function allow(methods: string): Record<string, string> {
  return { ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8', allow: methods };
}

/** POST only, actions enabled, same origin, JSON, and the token: each checked, in that order, before anything runs. */
async function action(
  options: ResolvedDashboard,
  request: DashboardRequest,
  name: string,
): Promise<DashboardResponse> {
  if (!(ACTION_NAMES as readonly string[]).includes(name))
    return refuse({ status: 404, message: `no action ${name}` });
  if (request.method !== 'POST')
    return { ...refuse({ status: 405, message: 'actions take POST' }), headers: allow('POST') };
  if (!options.actions)
    return refuse({ status: 403, message: 'actions are off (start the dashboard with actions enabled)' });
  const refusal = checkSameOrigin(options, request) ?? checkJson(request) ?? checkToken(options, request);
  if (refusal) return refuse(refusal);
  const text = await request.text(MAX_ACTION_BODY);
  if (text === undefined) return refuse({ status: 413, message: 'the body is too large' });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return refuse({ status: 400, message: 'the body is not JSON' });
  }
  const input = actionInput(name as ActionName, body);
  if ('error' in input) return refuse({ status: 400, message: input.error });
  const { status, ...result } = await runAction(options, name as ActionName, input);
  return json(status, result);
}
