/**
 * @module Media types the layer tells apart, framework-free: a JSON body (parsed once, so a broken one is refused
 * before any record exists) and an event stream (never held, it goes out as it is written).
 */

/** True when the declared media type is JSON (`application/json`, `application/problem+json`, …). */
export function isJsonMediaType(contentType: string | undefined | null): boolean {
  if (!contentType) return false;
  const semicolon = contentType.indexOf(';');
  const type = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/** True for `text/event-stream` (a response's Content-Type as a framework holds it: a string, or anything else). */
export function isEventStream(type: unknown): boolean {
  return typeof type === 'string' && type.trimStart().toLowerCase().startsWith('text/event-stream');
}
