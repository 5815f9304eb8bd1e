/**
 * @module Header pairs, framework-free: the `[name, value]` pairs the layer stores and answers with, made from a
 * plain header record (Node's `getHeaders()`, Fastify's `reply.getHeaders()`) and grouped by name for the APIs that
 * take one entry per name (`setHeader`, `reply.header`, a Lambda result's `multiValueHeaders`).
 */
import type { HeaderPairs } from '../core/store.js';

/** A header record as Node and Fastify give it: one value, or several for a repeated header (Set-Cookie). */
export type HeaderRecord = Readonly<Record<string, string | number | readonly string[] | undefined>>;

/** A header record as pairs; a multi-valued header (Set-Cookie) becomes one pair per value. */
export function headerPairs(headers: HeaderRecord): HeaderPairs {
  const pairs: [string, string][] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const one of value) pairs.push([name, one]);
    else pairs.push([name, String(value)]);
  }
  return pairs;
}

/** Pairs grouped by lower-case name, in first-seen order. */
export function groupHeaders(headers: HeaderPairs): Map<string, string[]> {
  const grouped = new Map<string, string[]>();
  for (const [name, value] of headers) {
    const lower = name.toLowerCase();
    const values = grouped.get(lower);
    if (values === undefined) grouped.set(lower, [value]);
    else values.push(value);
  }
  return grouped;
}
