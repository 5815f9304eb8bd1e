/**
 * @module RFC 9457 problem answers: the table of every problem the layer sends (slug, status, title), and how one
 * becomes status, headers and a JSON body.
 */
import type { HeaderPairs } from '../core/store.js';

/** What the layer tells an adapter to send: status, header pairs in order, body bytes. */
export interface HttpAnswer {
  readonly status: number;
  readonly headers: HeaderPairs;
  readonly body: Uint8Array;
}

/** Where every problem `type` points: one anchor per problem in `docs/errors.md`. */
export const ERRORS_DOC_URL = 'https://github.com/oncely/oncely/blob/main/docs/errors.md';

/**
 * Every answer the layer gives on its own, with its status and title. The slug is the anchor in `docs/errors.md`
 * and the last part of the problem's `type`, so clients can branch on it.
 */
export const PROBLEMS = {
  'key-missing': { status: 400, title: 'Idempotency key required' },
  'key-malformed': { status: 400, title: 'Malformed idempotency key' },
  'body-unparseable': { status: 400, title: 'Request body is not valid JSON' },
  'body-too-large': { status: 413, title: 'Request body too large' },
  'request-in-progress': { status: 409, title: 'A request with this key is in progress' },
  'key-reused': { status: 422, title: 'Idempotency key reused with another request' },
  'store-unavailable': { status: 503, title: 'Idempotency store unavailable' },
  'lease-lost': { status: 503, title: 'Idempotency claim lost' },
  'response-not-retained': { status: 200, title: 'Response not retained' },
  'record-corrupt': { status: 500, title: 'Stored response unreadable' },
  'record-unreadable': { status: 500, title: 'Stored response cannot be decrypted' },
  'transaction-escaped': { status: 500, title: 'Handler ended the idempotency transaction' },
  'handler-failed': { status: 500, title: 'Handler failed' },
  'operation-not-found': { status: 404, title: 'No such operation' },
  'operation-failed': { status: 404, title: 'Operation did not complete' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemType = keyof typeof PROBLEMS;

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface ProblemExtras {
  /** Overrides the problem's usual status (the not-retained answer repeats the original status). */
  readonly status?: number;
  /** Seconds, written as `Retry-After`. */
  readonly retryAfterSeconds?: number;
  /** More headers, such as `Location`. */
  readonly headers?: HeaderPairs;
  /** Extension members of the problem object (RFC 9457 §3.2). */
  readonly members?: Readonly<Record<string, string | number | boolean>>;
}

/** An RFC 9457 problem answer: `application/problem+json` with `type`, `title`, `status` and `detail`. */
export function problemAnswer(type: ProblemType, detail: string, extras: ProblemExtras = {}): HttpAnswer {
  const status = extras.status ?? PROBLEMS[type].status;
  const body = JSON.stringify({
    type: `${ERRORS_DOC_URL}#${type}`,
    title: PROBLEMS[type].title,
    status,
    detail,
    ...extras.members,
  });
  const headers: [string, string][] = [['content-type', PROBLEM_CONTENT_TYPE]];
  if (extras.retryAfterSeconds !== undefined) headers.push(['retry-after', String(extras.retryAfterSeconds)]);
  if (extras.headers !== undefined) for (const [name, value] of extras.headers) headers.push([name, value]);
  return { status, headers, body: Buffer.from(body, 'utf8') };
}

/** `Retry-After` is whole seconds (RFC 9110 §10.2.3); a wait under a second still says 1, never 0. */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
