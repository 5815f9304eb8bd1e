/**
 * @module What a handler behind an HTTP adapter gets (`IdempotencyContext`: the claim's token, signal and deadline,
 * and `defer` for long-running work), and how a deferred handler's answer becomes the stored outcome.
 */
// This file's declarations use AbortSignal: the directive, kept in its .d.ts, loads it from @types/node for Node
// projects without the DOM lib whose tsconfig does not list @types/node (TypeScript 6+ lists none by default).
/// <reference types="node" preserve="true" />
import type { ExecutionContext } from '../core/claim.js';
import { InvalidOptionsError } from '../core/errors.js';
import type { Outcome } from '../core/record.js';
import type { HeaderPairs } from '../core/store.js';

/** What a deferred (long-running) handler finally answers; stored and replayed like any response. */
export interface DeferredResponse {
  readonly status: number;
  readonly headers?: HeaderPairs | Readonly<Record<string, string | readonly string[]>>;
  /** The body as text or bytes; or pass `json`. */
  readonly body?: string | Uint8Array;
  /** Serialized with JSON.stringify, with `content-type: application/json` unless headers set one. */
  readonly json?: unknown;
}

/** Background work of a long-running request: it gets the claim (token, signal) and returns the final answer. */
export type DeferredWork = (claim: ExecutionContext) => Promise<DeferredResponse>;

/**
 * What a handler sees of the layer while it owns a key: the key, the fencing token to pass to downstream
 * writes, the abort signal that fires if the claim is lost, and a say in what is stored.
 *
 * `Sent` is what `defer` returns in the adapter at hand (Fastify: the reply; Hono: the Response; otherwise void).
 */
export interface IdempotencyContext<Sent = void> {
  /** The client's key, as sent (unquoted). */
  readonly key: string;
  /** The record's id: the URL-safe SHA-256 of scope and key; status URLs of long-running requests use it. */
  readonly id: string;
  /** Fencing token of this claim: a downstream write that carries it can refuse a stale owner. */
  readonly token: number;
  /** 1 on the first run; higher after a crashed owner's lease ran out (takeover) or a released attempt. */
  readonly attempt: number;
  readonly takeover: boolean;
  /** Aborted when the claim is lost while the handler runs (its result will not be stored). */
  readonly signal: AbortSignal;
  /**
   * Transactional mode (`store: postgresStore.transactional()`): the open transaction's client. Write the effect
   * through it (or `transactionOf(context)` from `oncely/postgres`): it commits with the stored response, and
   * rolls back when the response is not kept (5xx, `skipStorage`, a thrown error). Undefined otherwise.
   */
  readonly transaction: unknown;
  /** Do not store this response: the key is released and a retry runs the handler again. */
  skipStorage(): void;
  /** Keep this response for `ms` instead of the route's retention. */
  retainFor(ms: number): void;
  /**
   * Answer `202 Accepted` with a `Location` to poll now, and finish `work` in the background under the same
   * claim (its lease is renewed); its result is stored and replayed. Only on routes with `longRunning`.
   */
  defer(work: DeferredWork): Sent;
}

/** The layer's side of the context: what the flow reads back after the handler ran. */
export class HandlerContext<Sent> implements IdempotencyContext<Sent> {
  skipped = false;
  retentionMs: number | undefined;
  readonly #claim: ExecutionContext;
  readonly #deferrer: { defer(work: DeferredWork): Sent };

  constructor(
    readonly key: string,
    claim: ExecutionContext,
    /** What carries out `defer` (the running request). */
    deferrer: { defer(work: DeferredWork): Sent },
  ) {
    this.#claim = claim;
    this.#deferrer = deferrer;
  }

  get id(): string {
    return this.#claim.key;
  }
  get token(): number {
    return this.#claim.token;
  }
  get attempt(): number {
    return this.#claim.attempt;
  }
  get takeover(): boolean {
    return this.#claim.takeover;
  }
  get signal(): AbortSignal {
    return this.#claim.signal;
  }
  get transaction(): unknown {
    return this.#claim.transaction;
  }

  skipStorage(): void {
    this.skipped = true;
  }

  retainFor(ms: number): void {
    if (!Number.isInteger(ms) || ms < 1)
      throw new InvalidOptionsError(`retainFor needs a whole number of ms >= 1, got ${ms}`);
    this.retentionMs = ms;
  }

  defer(work: DeferredWork): Sent {
    if (typeof work !== 'function')
      throw new InvalidOptionsError('defer needs a function returning the final response');
    return this.#deferrer.defer(work);
  }
}

/** A deferred handler's answer as an outcome: bytes and header pairs, JSON serialized once. */
export function deferredOutcome(response: DeferredResponse): Outcome {
  if (response === null || typeof response !== 'object' || !Number.isInteger(response.status)) {
    throw new InvalidOptionsError('defer: the work must resolve with { status, headers?, body? | json? }');
  }
  const headers: [string, string][] = [];
  const given = response.headers ?? [];
  if (Array.isArray(given))
    for (const [name, value] of given as HeaderPairs) headers.push([name.toLowerCase(), value]);
  else {
    for (const [name, value] of Object.entries(given)) {
      for (const one of typeof value === 'string' ? [value] : value) headers.push([name.toLowerCase(), one]);
    }
  }
  let body: Uint8Array;
  if (response.json !== undefined) {
    body = Buffer.from(JSON.stringify(response.json), 'utf8');
    if (!headers.some(([name]) => name === 'content-type'))
      headers.push(['content-type', 'application/json']);
  } else if (typeof response.body === 'string') body = Buffer.from(response.body, 'utf8');
  else body = response.body ?? new Uint8Array(0);
  return { status: response.status, headers, body };
}
