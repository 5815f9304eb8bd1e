/**
 * @module The dashboard's request checks: the `Host` it is reached by (against DNS rebinding), the token (in
 * constant time), and, for actions, same origin; each refusal with its status and a message.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ResolvedDashboard } from './options.js';

/** A request as the routes see it, whichever server delivered it (node:http or Fetch). */
export interface DashboardRequest {
  readonly method: string;
  /** The path below `basePath`, '' for the page itself. */
  readonly path: string;
  readonly query: URLSearchParams;
  header(name: string): string | undefined;
  /** The body as text, at most `limit` bytes (undefined when it is longer). */
  text(limit: number): Promise<string | undefined>;
}

/** Why a request is refused: the status and a message for the page (or the operator's curl). */
export interface Refusal {
  readonly status: number;
  readonly message: string;
}

/** The header the page sends the token in. A header, not a cookie: a browser never attaches it on its own. */
export const TOKEN_HEADER = 'x-oncely-token';

/** `Host` must be one the dashboard was told it is reached by: a rebound DNS name pointing at 127.0.0.1 is not. */
export function checkHost(options: ResolvedDashboard, request: DashboardRequest): Refusal | undefined {
  if (options.allowedHosts === undefined) return undefined;
  const host = request.header('host')?.toLowerCase();
  if (host !== undefined && options.allowedHosts.includes(host)) return undefined;
  return { status: 421, message: `this dashboard does not answer for host ${host ?? '(none)'}` };
}

/** The token, compared in constant time (hashed first, so the lengths match too). */
export function checkToken(options: ResolvedDashboard, request: DashboardRequest): Refusal | undefined {
  const expected = options.token;
  if (expected === undefined) return { status: 403, message: 'no token is configured' };
  const given = request.header(TOKEN_HEADER);
  if (given === undefined || given === '')
    return { status: 401, message: `this needs the dashboard's token in the ${TOKEN_HEADER} header` };
  const digest = (text: string) => createHash('sha256').update(text).digest();
  if (!timingSafeEqual(digest(given), digest(expected))) return { status: 403, message: 'wrong token' };
  return undefined;
}

/**
 * An action must come from the dashboard's own page: a browser marks a request another site makes
 * (`Sec-Fetch-Site: cross-site` or `same-site`) and names its page in `Origin`. Either, when present, must say
 * same origin. A client that sends neither is not a browser (curl with the token), which forged requests cannot be.
 */
export function checkSameOrigin(options: ResolvedDashboard, request: DashboardRequest): Refusal | undefined {
  const site = request.header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none')
    return { status: 403, message: `cross-site request refused (Sec-Fetch-Site: ${site})` };
  const origin = request.header('origin');
  if (origin === undefined) return undefined;
  if (options.allowedOrigins.includes(origin)) return undefined;
  const host = request.header('host');
  let originHost: string | undefined;
  try {
    originHost = new URL(origin).host;
  } catch {
    originHost = undefined;
  }
  if (host !== undefined && originHost !== undefined && originHost === host.toLowerCase()) return undefined;
  return { status: 403, message: `cross-origin request refused (Origin: ${origin})` };
}

/** A JSON content type cannot come from an HTML form, so a forged form post fails here too. */
export function checkJson(request: DashboardRequest): Refusal | undefined {
  const type = request.header('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type === 'application/json') return undefined;
  return { status: 415, message: 'actions take a JSON body (Content-Type: application/json)' };
}
