/**
 * @module Telling the layer's refusal of a key (a 400/422 problem of type `key-reused`, `key-missing`,
 * `key-malformed`) apart from the application's own 4xx answers, so the caller gets a `KeyRejectedError` rather than
 * a response that looks like the operation's result.
 */
import { KeyRejectedError, type KeyRejection, type ProblemDetails } from './errors.js';

/** The problem types (anchors of docs/errors.md) by which the idempotency layer refuses a key. */
const REJECTIONS: Readonly<Record<string, KeyRejection>> = {
  'key-reused': 'reused',
  'key-missing': 'missing',
  'key-malformed': 'malformed',
};

/** Problem bodies are a few hundred bytes; a larger "problem" is not one of the layer's. */
const MAX_PROBLEM_BYTES = 16_384;

/**
 * The layer's refusal of the key, when a final answer is one: a 400 or 422 `application/problem+json` whose `type`
 * ends in `#key-reused`, `#key-missing` or `#key-malformed`. Such an answer is not the application's answer to the
 * request, so the caller gets a `KeyRejectedError` instead of a response that looks like the operation's result
 * (an application's own 422, a validation error, is returned as it is). Reads a clone: the response stays unread.
 */
export async function keyRejection(response: Response, key: string): Promise<KeyRejectedError | undefined> {
  if (response.status !== 400 && response.status !== 422) return undefined;
  const mediaType = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/problem+json') return undefined;
  const problem = await readProblem(response.clone());
  const anchor = typeof problem?.type === 'string' ? problem.type.split('#').pop() : undefined;
  const reason = anchor === undefined ? undefined : REJECTIONS[anchor];
  if (problem === undefined || reason === undefined) return undefined;
  return new KeyRejectedError(key, reason, response.status, problem);
}

async function readProblem(response: Response): Promise<ProblemDetails | undefined> {
  const declared = Number(response.headers.get('content-length'));
  if (declared > MAX_PROBLEM_BYTES) {
    await response.body?.cancel();
    return undefined;
  }
  try {
    const text = await response.text();
    if (text.length > MAX_PROBLEM_BYTES) return undefined;
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as ProblemDetails)
      : undefined;
  } catch {
    return undefined;
  }
}
