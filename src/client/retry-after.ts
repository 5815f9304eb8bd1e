/**
 * @module `Retry-After` read as milliseconds from now (delay-seconds or an HTTP-date); a malformed value reads as
 * none, so it cannot turn into a zero wait that hammers the server.
 */
const DELAY_SECONDS = /^\d+$/;

/**
 * Reads a `Retry-After` value (RFC 9110 §10.2.3) as milliseconds from now: `delay-seconds` (whole seconds, as
 * oncely's servers send it) or an HTTP-date (a date in the past means now, 0). Anything else is undefined, and the
 * caller falls back to its own backoff: a malformed hint must not become a zero wait that hammers the server.
 * The cap is applied by the caller, so the value stays what the server said.
 *
 * @example
 * parseRetryAfter('2')                              // 2000
 * parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT') // ms until then, or 0
 * parseRetryAfter('soon')                           // undefined
 */
export function parseRetryAfter(
  value: string | null | undefined,
  nowMs: number = Date.now(),
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (DELAY_SECONDS.test(trimmed)) {
    const seconds = Number(trimmed);
    // A value too large to be a number of milliseconds is still "a long time": the cap will take it.
    return Number.isSafeInteger(seconds * 1000) ? seconds * 1000 : Number.MAX_SAFE_INTEGER;
  }
  // Only something shaped like a date goes to Date.parse, which also accepts bare numbers such as "1.5" or "-1".
  if (!/[A-Za-z]/.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
