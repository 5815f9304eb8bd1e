/**
 * @module A Lambda HTTP handler's result and the layer's own answers, in both directions: the result a handler
 * returns (REST or HTTP API format, base64 bodies, multi-value headers and cookies) as the outcome to store, and a
 * stored outcome or a 4xx/503 answer as the result its format expects.
 */
import type { Outcome } from '../core/record.js';
import type { HeaderPairs } from '../core/store.js';
import { groupHeaders } from '../http/header-pairs.js';
import type { HttpAnswer } from '../http/problem.js';
import type { HttpApiResult, RestApiResult } from './events.js';
import type { EventFormat } from './http-event.js';

/**
 * A stored header that says the handler sent its body base64-encoded (`isBase64Encoded: true`), so its replay is
 * sent the same way: API Gateway turns base64 back into bytes only for responses it was told are binary, and a
 * replay sent as text would reach the client as base64 text. Named `content-…` because it describes the body: a
 * replay that did not keep the body (over `maxBodyBytes`) drops it with the other content headers. Never sent.
 */
export const BASE64_MARKER = 'content-x-oncely-lambda-encoding';

type HeaderValue = boolean | number | string;

/**
 * The handler's result as an outcome to store: status, header pairs, the body's bytes. Undefined when the result
 * is no HTTP response for its format (a REST result without a numeric `statusCode`, which API Gateway answers
 * with 502): nothing is stored then.
 */
export function outcomeOf(result: unknown, format: EventFormat): Outcome | undefined {
  const structured = result !== null && typeof result === 'object' && 'statusCode' in result;
  if (format === 'http' && !structured) {
    // Format 2.0 infers the rest: any other JSON value is a 200 application/json with that value as its body.
    return {
      status: 200,
      headers: [['content-type', 'application/json']],
      body: Buffer.from(JSON.stringify(result) ?? 'null', 'utf8'),
    };
  }
  if (!structured) return undefined;
  const response = result as Partial<RestApiResult & HttpApiResult>;
  const status = response.statusCode;
  if (typeof status !== 'number' || !Number.isInteger(status)) return undefined;
  const headers: [string, string][] = [];
  const multi = response.multiValueHeaders ?? {};
  // API Gateway merges both maps; a pair given in both appears once (as multiValueHeaders has it).
  for (const [name, values] of Object.entries(multi)) {
    for (const value of values ?? []) headers.push([name.toLowerCase(), String(value)]);
  }
  for (const [name, value] of Object.entries(response.headers ?? {})) {
    const lower = name.toLowerCase();
    const text = String(value as HeaderValue);
    if (!headers.some(([known, was]) => known === lower && was === text)) headers.push([lower, text]);
  }
  for (const cookie of response.cookies ?? []) headers.push(['set-cookie', cookie]);
  const base64 = response.isBase64Encoded === true;
  if (base64) headers.push([BASE64_MARKER, 'base64']);
  const body = response.body ?? '';
  return { status, headers, body: Buffer.from(body, base64 ? 'base64' : 'utf8') };
}

/** A layer's answer (a replay, 4xx, 503) as the result a handler of `format` would return for it. */
export function resultOf(answer: HttpAnswer, format: EventFormat): RestApiResult | HttpApiResult {
  const { headers, base64 } = sendable(answer.headers);
  const bytes = Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength);
  const body = bytes.toString(base64 ? 'base64' : 'utf8');
  return format === 'rest'
    ? restResult(answer.status, headers, body, base64)
    : httpResult(answer.status, headers, body, base64);
}

function restResult(status: number, headers: HeaderPairs, body: string, base64: boolean): RestApiResult {
  const grouped = groupHeaders(headers);
  const single: Record<string, string> = {};
  const multi: Record<string, string[]> = {};
  // One line: `headers`; several (Set-Cookie kept with keepHeaders, Vary, Link): `multiValueHeaders`, every line.
  for (const [name, values] of grouped) {
    if (values.length === 1) single[name] = values[0]!;
    else multi[name] = values;
  }
  const result: RestApiResult = { statusCode: status, headers: single, body, isBase64Encoded: base64 };
  if (Object.keys(multi).length > 0) result.multiValueHeaders = multi;
  return result;
}

function httpResult(status: number, headers: HeaderPairs, body: string, base64: boolean): HttpApiResult {
  const single: Record<string, string> = {};
  const cookies: string[] = [];
  // Format 2.0 has no multi-value headers: lines join with commas, and Set-Cookie lines go to `cookies`.
  for (const [name, values] of groupHeaders(headers)) {
    if (name === 'set-cookie') cookies.push(...values);
    else single[name] = values.join(', ');
  }
  const result: HttpApiResult = { statusCode: status, headers: single, body, isBase64Encoded: base64 };
  if (cookies.length > 0) result.cookies = cookies;
  return result;
}

function sendable(headers: HeaderPairs): { headers: HeaderPairs; base64: boolean } {
  if (!headers.some(([name]) => name === BASE64_MARKER)) return { headers, base64: false };
  return { headers: headers.filter(([name]) => name !== BASE64_MARKER), base64: true };
}
