/**
 * @module The framework-free request driver every adapter uses (`HttpIdempotency`): a request's key, scope and
 * fingerprint read once, then an answer of its own or a claim from the engine, settled through `Running`.
 */
import type { BeginRequest, Begun, Engine } from '../core/engine.js';
import {
  FingerprintMismatchError,
  InProgressError,
  isInvalidKeyError,
  isStoreUnavailableError,
} from '../core/errors.js';
import { scopedKey } from '../core/key.js';
import { type AnswerContext, answerForError, replayAnswer } from './answers.js';
import { rejected, replayedFromCache } from './diagnostics.js';
import { parseKeyHeader } from './key-header.js';
import type { LocalOutcomeCache } from './local-cache.js';
import type { ResolvedRoute, Shared } from './options.js';
import { type HttpAnswer, problemAnswer } from './problem.js';
import { requestFingerprint } from './request-fingerprint.js';
import { keyFromRequest } from './request-key.js';
import { RunTimes } from './run-times.js';
import { type ClaimedRequest, Running, type RunningTarget } from './running.js';
import { pathOf, type RequestView, routeLabel } from './scope.js';

export type { Finish } from './running.js';
export { Running } from './running.js';

function malformed(error: unknown, method: string, route: string | undefined): Decided {
  return { kind: 'answer', answer: rejected('key-malformed', answerForError(error)!, method, route) };
}

function unparseable(method: string, route: string | undefined): Decided {
  const answer = problemAnswer('body-unparseable', 'the body is declared JSON but does not parse');
  return { kind: 'answer', answer: rejected('body-unparseable', answer, method, route) };
}

/** What the adapter does next with a request. */
export type Start<Sent> =
  /** Not the layer's business (a safe method, or no key where none is required): run the handler as usual. */
  | { readonly kind: 'pass' }
  /** The layer answers on its own (replay, 4xx, 503): send this, do not run the handler. */
  | { readonly kind: 'answer'; readonly answer: HttpAnswer }
  /** The request owns the key: run the handler, then hand its response to `respond` (or its error to `fail`). */
  | Running<Sent>;

/**
 * A request to `begin` for: what the engine's `begin` is given, and what a `Running` keeps of it, so deciding and
 * claiming a request make no second object. `scope` is the method and route template, or the method alone:
 * low-cardinality, for telemetry and the record's label.
 */
interface Begin extends ClaimedRequest, BeginRequest {
  readonly kind: 'begin';
  readonly scope: string;
}

type Decided = Start<never> | Begin;

const PASS = { kind: 'pass' } as const;

/**
 * The framework-free request driver every adapter uses, one pass down and back: parse the key, scope and
 * fingerprint the request, answer from the local cache, or `begin` in the engine; a claim comes back as a
 * `Running` that the adapter settles with the handler's response.
 */
export class HttpIdempotency<Req> {
  readonly engine: Engine;
  readonly cache: LocalOutcomeCache | undefined;
  readonly #target: RunningTarget;
  readonly #runTimes = new RunTimes();

  constructor(
    shared: Shared,
    readonly route: ResolvedRoute<Req>,
  ) {
    this.engine = shared.engine;
    this.cache = shared.cache;
    this.#target = {
      route: route as ResolvedRoute<unknown>,
      cache: shared.cache,
      maxBodyBytes: shared.maxBodyBytes,
      notices: shared.notices,
      runTimes: this.#runTimes,
    };
  }

  /** True when requests with this method are the layer's business. Adapters skip reading bodies otherwise. */
  handles(method: string): boolean {
    return this.route.methods.has(method);
  }

  /**
   * Decides a request. `accept` sends the 202 of a deferred request through the framework and returns what
   * `defer` gives the handler. `leaseUntil`: the time the request's process cannot outlive (a Lambda invocation's
   * deadline), see `BeginRequest`. Rejects only with errors of the user's own functions (scope, fingerprint).
   */
  start<Sent>(
    view: RequestView<Req>,
    accept: (answer: HttpAnswer) => Sent,
    bodyUnparseable?: () => boolean,
    leaseUntil?: number,
  ): Promise<Start<Sent>> {
    let decided: Decided;
    try {
      decided = this.#decide(view, bodyUnparseable, leaseUntil);
    } catch (error) {
      return Promise.reject(error);
    }
    if (decided.kind !== 'begin') return Promise.resolve(decided);
    return this.engine.begin(decided).then(
      (begun) => this.#begun(begun, decided, accept),
      (error: unknown) => this.#unavailable(error, decided.key),
    );
  }

  /** Everything `start` decides without the store: pass, answer at once (4xx, cached replay), or begin. */
  #decide(
    view: RequestView<Req>,
    bodyUnparseable: (() => boolean) | undefined,
    leaseUntil: number | undefined,
  ): Decided {
    const { route } = this;
    const { method } = view;
    if (!route.methods.has(method)) return PASS;
    // A key taken from the body needs the body read first; the header's is checked before the body is.
    if (route.key !== undefined && bodyUnparseable?.()) return unparseable(method, view.route);
    let key: string | undefined;
    if (route.key === undefined) {
      const raw = view.header(route.header);
      // Repeated lines arrive joined by ", ": only a value with a comma can be two, so the common case asks nothing.
      if (raw?.includes(',') && view.repeated?.(route.header)) {
        const answer = problemAnswer('key-malformed', `send one ${route.header} header line, not several`, {
          members: { reason: 'multiple' },
        });
        return { kind: 'answer', answer: rejected('key-malformed', answer, method, view.route) };
      }
      try {
        key = parseKeyHeader(raw);
      } catch (error) {
        return malformed(error, method, view.route);
      }
    } else {
      try {
        key = keyFromRequest(view, route.key);
      } catch (error) {
        if (!isInvalidKeyError(error)) throw error;
        return malformed(error, method, view.route);
      }
    }
    if (key === undefined) {
      if (!route.required) return PASS;
      const answer = problemAnswer(
        'key-missing',
        route.key === undefined
          ? `this request needs an ${route.header} header`
          : 'this request needs an idempotency key, which this route takes from the request itself',
      );
      return { kind: 'answer', answer: rejected('key-missing', answer, method, view.route) };
    }
    if (route.key === undefined && bodyUnparseable?.()) return unparseable(method, view.route);
    const id = scopedKey(route.scope(view), key);
    const fingerprint = requestFingerprint(view, route.fingerprint);
    const cached = this.cache?.lookup(id, fingerprint);
    if (cached !== undefined && cached.kind !== 'miss') {
      if (cached.kind === 'hit')
        return { kind: 'answer', answer: replayedFromCache(cached.answer, id, method, view.route) };
      const answer = answerForError(new FingerprintMismatchError())!;
      return { kind: 'answer', answer: rejected('mismatch', answer, method, view.route, id) };
    }
    return {
      kind: 'begin',
      key: id,
      clientKey: key,
      fingerprint,
      // A path may hold ids: only a route template keeps the metrics' attribute values few.
      scope: routeLabel(method, view.route),
      waitMs: route.waitMs,
      leaseMs: route.leaseMs,
      retentionMs: route.retentionMs,
      leaseUntil,
      runs: `${method} ${view.route ?? pathOf(view.target)}`,
    };
  }

  #begun<Sent>(begun: Begun, request: Begin, accept: (answer: HttpAnswer) => Sent): Start<Sent> {
    const { key: id, fingerprint, runs } = request;
    switch (begun.kind) {
      case 'acquired':
        return new Running(this.#target, request, begun.claim, accept);
      case 'replay': {
        const answer = replayAnswer(begun.outcome);
        this.cache?.remember(id, fingerprint, answer, begun.completedAt + this.route.retentionMs);
        return { kind: 'answer', answer };
      }
      case 'inProgress': {
        // The store says how long the holder's lease has left; the route's run times say when it likely answers.
        const retryAfterMs = this.#runTimes.retryAfterMs(runs, begun.retryAfterMs);
        return this.#answer(new InProgressError(retryAfterMs, begun.attempt), id);
      }
      case 'mismatch':
        return this.#answer(new FingerprintMismatchError(), id);
    }
  }

  /** `begin` failed: 503 (fail closed), or the handler runs unprotected where the route fails open. */
  #unavailable(error: unknown, id: string): Start<never> {
    if (this.route.failOpen && isStoreUnavailableError(error)) return PASS;
    return this.#answer(error, id);
  }

  #answer(error: unknown, id: string): Start<never> {
    const longRunning = this.route.longRunning;
    const context: AnswerContext = longRunning
      ? { accepted: { location: longRunning.location(id), pollAfterMs: longRunning.pollAfterMs } }
      : {};
    const answer = answerForError(error, context);
    if (answer === undefined) throw error;
    return { kind: 'answer', answer };
  }
}
