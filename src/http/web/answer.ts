/**
 * @module The layer's answers as web-standard `Response`s: a problem, a replay or a 202 built from an `HttpAnswer`,
 * and a handler's response sent again from the bytes that were read out of it (and stored).
 */
import type { HttpAnswer } from '../problem.js';

// Statuses whose responses cannot carry a body (Fetch spec "null body status"): `new Response` refuses one.
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** An answer of the layer (a replay, a problem, a 202) as a new `Response`. */
export function answerResponse(answer: HttpAnswer): Response {
  const headers = new Headers();
  for (const [name, value] of answer.headers) headers.append(name, value);
  return new Response(NULL_BODY.has(answer.status) ? null : (answer.body as Uint8Array<ArrayBuffer>), {
    status: answer.status,
    headers,
  });
}

/**
 * The handler's response again, with the body that was read out of it (a body is read once): same status, status
 * text and headers (each `Set-Cookie` kept: they are this request's), same bytes.
 */
export function rebuiltResponse(original: Response, body: Uint8Array): Response {
  return new Response(NULL_BODY.has(original.status) ? null : (body as Uint8Array<ArrayBuffer>), {
    status: original.status,
    statusText: original.statusText,
    headers: original.headers,
  });
}
