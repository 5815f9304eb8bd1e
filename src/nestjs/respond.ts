/**
 * @module The Nest shell over the Node capture: the handler's response of a request that owns its key is a
 * `NodeExchange` like Express's, held on the raw `ServerResponse` whichever platform Nest runs on.
 */
// This file's declarations use Node's types (node:http): the directive, kept in its .d.ts, loads @types/node for
// users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import type { ServerResponse } from 'node:http';
import type { Outcome } from '../core/record.js';
import type { HeaderPairs } from '../core/store.js';
import type { Running } from '../http/flow.js';
import { answerOver } from '../http/node/answer.js';
import { NodeExchange } from '../http/node/exchange.js';
import { type HttpAnswer, problemAnswer } from '../http/problem.js';

/**
 * The handler's response of a request that owns its key: held on the raw response as it is written (Nest's
 * serialization, a `@Res()` handler's own writes, an exception filter's error page alike), stored, then sent; or
 * replaced by the 202 of `defer`.
 */
export class NestExchange extends NodeExchange {
  #instead: HttpAnswer | undefined;

  constructor(
    running: Running<void>,
    raw: ServerResponse,
    /** The response's headers when the layer got the request (Fastify keeps a reply's own apart). */
    readonly before: HeaderPairs,
    /** Nest sends nothing for this handler (`@Res()`): the 202 of `defer` goes out at once. */
    readonly answersItself: boolean,
  ) {
    super(running, raw, before);
    // 'close' follows the end of every response, and comes alone when the client went away first: a claim still
    // open then (a streamed response, a handler that never answered) lets its key go.
    raw.once('close', () => void running.ended());
  }

  /** `defer` answered 202: it replaces what Nest sends for the handler's return value. */
  accept(answer: HttpAnswer): void {
    if (this.answersItself) this.#sendInstead(answer);
    else this.#instead = answer;
  }

  override onEnd(response: Outcome): void {
    if (this.#instead !== undefined) this.#sendInstead(this.#instead);
    else super.onEnd(response);
  }

  /** The key is let go when the connection closes (see the constructor). */
  override onPassThrough(eventStream: boolean): void {
    this.running.streaming(eventStream);
  }

  /** Settling failed without an answer: nothing went out, and the connection is closed unanswered. */
  protected rejected(): void {
    this.res.destroy();
  }

  protected answerError(): void {
    this.capture.answer(problemAnswer('handler-failed', 'the request failed; nothing was stored'));
  }

  #sendInstead(answer: HttpAnswer): void {
    this.capture.restore();
    answerOver(this.res, this.before, answer);
  }
}
