/**
 * @module Header maps of a Node response (`getHeaders()`, `setHeader`) as the capture needs them: copied, compared,
 * applied and reset. The pairs the layer stores are made by `header-pairs.ts`, which every adapter shares.
 */
// This file's declarations use Node's types (node:http): the directive, kept in its .d.ts, loads @types/node for
// users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { HeaderPairs } from '../../core/store.js';
import { groupHeaders } from '../header-pairs.js';

/**
 * A response's header map as it is now: `getHeaders()` copies the map but not its arrays, which `appendHeader`
 * extends in place, so those are copied too.
 */
export function headerCopy(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  for (const name in headers) {
    const value = headers[name];
    if (Array.isArray(value)) headers[name] = value.slice();
  }
  return headers;
}

/** True when two header maps (as `getHeaders()` gives them) hold the same names and values. */
export function sameHeaders(before: OutgoingHttpHeaders, after: OutgoingHttpHeaders): boolean {
  let names = 0;
  for (const name in after) {
    names++;
    const was = before[name];
    const is = after[name];
    if (was === is) continue;
    if (!Array.isArray(was) || !Array.isArray(is) || was.length !== is.length) return false;
    for (let index = 0; index < was.length; index++) if (was[index] !== is[index]) return false;
  }
  for (const _ in before) names--;
  return names === 0;
}

export function applyHeaders(res: ServerResponse, headers: unknown): void {
  if (Array.isArray(headers)) {
    // Either [[name, value], …] or the flat [name, value, name, value] form.
    const pairs: [string, string][] = Array.isArray(headers[0])
      ? (headers as [string, string][])
      : Array.from({ length: headers.length / 2 }, (_, index) => [
          headers[index * 2],
          headers[index * 2 + 1],
        ]);
    const grouped = groupHeaders(pairs);
    for (const [name, values] of grouped) res.setHeader(name, values.length === 1 ? values[0]! : values);
    return;
  }
  for (const [name, value] of Object.entries(headers as OutgoingHttpHeaders)) {
    if (value !== undefined) res.setHeader(name, value);
  }
}

/** Puts the response's headers back to `headers` (what they were when the layer got the request). */
export function resetHeaders(res: ServerResponse, headers: HeaderPairs): void {
  for (const name of res.getHeaderNames()) res.removeHeader(name);
  for (const [name, values] of groupHeaders(headers))
    res.setHeader(name, values.length === 1 ? values[0]! : values);
}
