/**
 * @module The layer's own answers on a Node `ServerResponse` (a replay, a 4xx, a 202, a 503): written whole with
 * their length, or sent in place of what the framework writes next.
 */
// This file's declarations use Node's types (node:http): the directive, kept in its .d.ts, loads @types/node for
// users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import type { ServerResponse } from 'node:http';
import type { HeaderPairs } from '../../core/store.js';
import { groupHeaders } from '../header-pairs.js';
import type { HttpAnswer } from '../problem.js';
import { resetHeaders } from './headers.js';
import { type AnyMethod, METHODS } from './methods.js';

type Callback = (error?: Error | null) => void;

/**
 * Sends an answer of the layer. `replaceHeaders` drops headers the handler had set (when the layer answers
 * in its place); headers set by middleware before it (CORS, request ids) stay otherwise.
 */
export function writeAnswer(
  res: ServerResponse,
  answer: HttpAnswer,
  replaceHeaders = false,
  end: AnyMethod = res.end as AnyMethod,
): void {
  if (res.headersSent || res.destroyed) {
    if (!res.writableEnded) end.call(res);
    return;
  }
  if (replaceHeaders) for (const name of res.getHeaderNames()) res.removeHeader(name);
  res.statusCode = answer.status;
  for (const [name, values] of groupHeaders(answer.headers))
    res.setHeader(name, values.length === 1 ? values[0]! : values);
  res.setHeader('content-length', answer.body.byteLength);
  end.call(res, answer.body);
}

/**
 * Sends an answer of the layer with the headers the response had when the layer got the request (`before`:
 * middleware's CORS and request ids, as every adapter keeps them), and nothing the handler set.
 */
export function answerOver(res: ServerResponse, before: HeaderPairs, answer: HttpAnswer): void {
  if (!res.headersSent) resetHeaders(res, before);
  writeAnswer(res, answer);
}

/**
 * Sends `answer` in place of whatever the framework sends next on this response (Nest always answers a request
 * whose interceptor returned a value): that reply is dropped as it is written, and the layer's answer goes out
 * instead, byte for byte, whatever exception filters, outer interceptors or serializers would have made of it.
 */
export function answerInstead(res: ServerResponse, before: HeaderPairs, answer: HttpAnswer): void {
  const target = res as unknown as Record<string, unknown>;
  const own = METHODS.map((name) => [name, Object.getOwnPropertyDescriptor(res, name)] as const);
  const restore = () => {
    for (const [name, descriptor] of own) {
      if (descriptor === undefined) delete target[name];
      else Object.defineProperty(res, name, descriptor);
    }
  };
  const callbackOf = (args: unknown[]) => args.find((arg): arg is Callback => typeof arg === 'function');
  target.writeHead = () => res;
  target.flushHeaders = () => undefined;
  target.write = (...args: unknown[]) => {
    const done = callbackOf(args);
    if (done) process.nextTick(done);
    return true;
  };
  target.end = (...args: unknown[]) => {
    restore();
    const done = callbackOf(args);
    if (done) res.once('finish', () => done());
    answerOver(res, before, answer);
    return res;
  };
}
