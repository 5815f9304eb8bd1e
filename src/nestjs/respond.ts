// This file's declarations use Node's types (node:http): the directive, kept in its .d.ts, loads @types/node for
// users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import type { ServerResponse } from 'node:http';
import type { HeaderPairs } from '../core/store.js';
import type { Finish, Running } from '../http/flow.js';
import { captureResponse, type ResponseCapture, writeAnswer } from '../http/node-response.js';
import { type HttpAnswer, problemAnswer } from '../http/problem.js';
import { resetHeaders } from './exchange.js';

/**
 * Sends an answer of the layer (a replay, a 409, a 202): with the headers the response had when the layer got the
 * request (middleware's CORS and request ids, as every adapter keeps them), and nothing the handler set.
 */
export function sendAnswer(raw: ServerResponse, before: HeaderPairs, answer: HttpAnswer): void {
  if (!raw.headersSent) resetHeaders(raw, before);
  writeAnswer(raw, answer);
}

const METHODS = ['writeHead', 'write', 'end', 'flushHeaders'] as const;
type Callback = (error?: Error | null) => void;

/**
 * Sends `answer` in place of whatever Nest sends next on this response. Nest always answers a request whose
 * interceptor returned a value (here, no value): its reply is dropped as it is written and the layer's answer goes
 * out instead, byte for byte, whatever exception filters, outer interceptors or serializers would have made of it.
 */
export function sendInstead(raw: ServerResponse, before: HeaderPairs, answer: HttpAnswer): void {
  const target = raw as unknown as Record<string, unknown>;
  const own = METHODS.map((name) => [name, Object.getOwnPropertyDescriptor(raw, name)] as const);
  const restore = () => {
    for (const [name, descriptor] of own) {
      if (descriptor === undefined) delete target[name];
      else Object.defineProperty(raw, name, descriptor);
    }
  };
  const callbackOf = (args: unknown[]) => args.find((arg): arg is Callback => typeof arg === 'function');
  target.writeHead = () => raw;
  target.flushHeaders = () => undefined;
  target.write = (...args: unknown[]) => {
    const done = callbackOf(args);
    if (done) process.nextTick(done);
    return true;
  };
  target.end = (...args: unknown[]) => {
    restore();
    const done = callbackOf(args);
    if (done) raw.once('finish', () => done());
    sendAnswer(raw, before, answer);
    return raw;
  };
}

/**
 * The handler's response of a request that owns its key: held on the raw response as it is written (Nest's
 * serialization, a `@Res()` handler's own writes, an exception filter's error page alike), stored, then sent; or
 * replaced by the 202 of `defer`.
 */
export class HeldResponse {
  readonly #capture: ResponseCapture;
  #instead: HttpAnswer | undefined;

  constructor(
    readonly raw: ServerResponse,
    readonly before: HeaderPairs,
    running: Running<void>,
    /** Nest sends nothing for this handler (`@Res()`): the 202 of `defer` goes out at once. */
    readonly answersItself: boolean,
  ) {
    this.#capture = captureResponse(raw, {
      onEnd: (response) => {
        if (this.#instead !== undefined) return this.#sendInstead(this.#instead);
        running.respond(response).then(
          (finish) => this.#deliver(finish),
          () => this.#close(),
        );
      },
      // A handler that changed status or headers after a partial write: Node would have thrown, the platforms
      // close the connection. Nothing went out; the key is released and the connection closed the same way.
      onBroken: () => void running.fail(BROKEN).then(() => this.#close()),
      maxHeldBytes: running.holdLimit,
      onPassThrough: (eventStream) => running.streaming(eventStream),
    });
    running.handOver(before);
    // 'close' follows the end of every response, and comes alone when the client went away first: a claim still
    // open then (a streamed response, a handler that never answered) lets its key go.
    raw.once('close', () => void running.ended());
  }

  /** `defer` answered 202: it replaces what Nest sends for the handler's return value. */
  accept(answer: HttpAnswer): void {
    if (this.answersItself) this.#sendInstead(answer);
    else this.#instead = answer;
  }

  #sendInstead(answer: HttpAnswer): void {
    this.#capture.restore();
    sendAnswer(this.raw, this.before, answer);
  }

  #deliver(finish: Finish): void {
    if (finish.kind === 'deferred') return;
    if (finish.kind === 'error')
      this.#capture.answer(problemAnswer('handler-failed', 'the request failed; nothing was stored'));
    else if (!finish.original) this.#capture.answer(finish.answer);
    else {
      this.#capture.restore();
      this.#capture.send();
    }
  }

  #close(): void {
    this.#capture.restore();
    this.raw.destroy();
  }
}

const BROKEN = new Error('the handler changed the status or headers after writing part of its body');
