/**
 * @module A request that owns its key on a Node `ServerResponse`: the capture's hooks wired to the flow's `Running`,
 * and the response sent once its outcome is stored. node:http, Express and Nest are shells over it.
 */
// This file's declarations use Node's types (Buffer, node:*): the directive, kept in its .d.ts, loads @types/node
// for users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import type { ServerResponse } from 'node:http';
import type { Outcome } from '../../core/record.js';
import type { HeaderPairs } from '../../core/store.js';
import { headerPairs } from '../header-pairs.js';
import type { Finish, Running } from '../running.js';
import { type CaptureHooks, captureResponse, type ResponseCapture } from './capture.js';

const BROKEN = new Error('the handler changed the status or headers after writing part of its body');

/**
 * A request that owns its key, answered through a Node `ServerResponse` (node:http, Express, Nest): the capture's
 * hooks and what is sent once the outcome is settled in the store. One object per request rather than a closure
 * per hook; the shells say what an error becomes.
 */
export abstract class NodeExchange implements CaptureHooks {
  readonly maxHeldBytes: number;
  readonly capture: ResponseCapture;

  /**
   * Captures `res` from here on. `before`: the headers the response has now, middleware's rather than the
   * handler's (by default those of `res`; a framework that keeps some apart, as Fastify does, passes them all).
   */
  constructor(
    readonly running: Running<void>,
    readonly res: ServerResponse,
    before: HeaderPairs = headerPairs(res.getHeaders()),
  ) {
    this.maxHeldBytes = running.holdLimit;
    this.capture = captureResponse(res, this);
    running.handOver(before);
  }

  /**
   * Settling the outcome failed in a way the layer has no answer for: hand the error to the framework (the capture
   * is restored, so what the framework sends goes out).
   */
  protected abstract rejected(error: unknown): void;

  /** The outcome ended in an error (the handler threw; a store error without an answer): answer for it. */
  protected abstract answerError(error: unknown): void;

  onEnd(response: Outcome): void {
    this.running.respond(response).then(
      (finish) => this.deliver(finish),
      (error: unknown) => {
        this.capture.restore();
        this.rejected(error);
      },
    );
  }

  /** What the framework does with headers changed after they went out: the connection is closed, unanswered. */
  onBroken(): void {
    void this.running.fail(BROKEN).then(() => {
      this.capture.restore();
      this.res.destroy();
    });
  }

  onPassThrough(eventStream: boolean): void {
    this.running.streaming(eventStream);
    this.res.once('close', () => void this.running.ended());
  }

  /** Sends what the flow decided once the outcome is settled in the store. */
  deliver(finish: Finish): void {
    if (finish.kind === 'deferred') return;
    this.capture.restore();
    if (finish.kind === 'error') this.answerError(finish.error);
    else if (!finish.original) this.capture.answer(finish.answer);
    else this.capture.send();
  }
}
