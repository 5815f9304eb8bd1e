import type { Engine, ExecuteResult, Verdict } from '../core/engine.js';
import { FingerprintMismatchError, InvalidOptionsError, isStoreUnavailableError } from '../core/errors.js';
import { scopedKey } from '../core/key.js';
import type { Outcome } from '../core/record.js';
import { acceptedAnswer, answerForError, replayAnswer } from './answers.js';
import { type DeferredWork, deferredOutcome, HandlerContext, type IdempotencyContext } from './context.js';
import { parseKeyHeader } from './key-header.js';
import type { LocalOutcomeCache } from './local-cache.js';
import type { ResolvedRoute, Shared } from './options.js';
import { storableHeaders } from './outcome-policy.js';
import { type HttpAnswer, problemAnswer } from './problem.js';
import { requestFingerprint } from './request-fingerprint.js';
import type { RequestView } from './scope.js';

/** What the adapter does next with a request. */
export type Start<Sent> =
  /** Not the layer's business (a safe method, or no key where none is required): run the handler as usual. */
  | { readonly kind: 'pass' }
  /** The layer answers on its own (replay, 4xx, 503): send this, do not run the handler. */
  | { readonly kind: 'answer'; readonly answer: HttpAnswer }
  /** The request owns the key: run the handler, then call `respond` (or `fail`) and send what `finished` gives. */
  | Running<Sent>;

export interface Running<Sent> {
  readonly kind: 'run';
  readonly context: IdempotencyContext<Sent>;
  /** The handler's captured response. Call once. */
  respond(response: Outcome): void;
  /** The handler threw before answering. The key is released. */
  fail(error: unknown): void;
  /** Resolves once the outcome is settled in the store (stored before sent), with what to send. */
  readonly finished: Promise<Finish>;
}

export type Finish =
  /** Send `answer`; `original` says it is the handler's own response, still in the framework's hands. */
  | { readonly kind: 'send'; readonly answer: HttpAnswer; readonly original: boolean }
  /** `defer` already sent 202 Accepted; the work goes on in the background. */
  | { readonly kind: 'deferred' }
  /** The handler threw: let the framework's error handling answer (nothing is stored). */
  | { readonly kind: 'error'; readonly error: unknown };

type HandlerDone =
  | { readonly kind: 'response'; readonly response: Outcome }
  | { readonly kind: 'error'; readonly error: unknown }
  | { readonly kind: 'deferred'; readonly work: DeferredWork };

type FirstStep = undefined | { readonly result: ExecuteResult<Outcome> } | { readonly error: unknown };

const PASS = { kind: 'pass' } as const;
const DEFERRED: Finish = { kind: 'deferred' };

/**
 * The framework-free request driver every adapter uses: parses the key, scopes and fingerprints the request,
 * answers from the local cache or the engine, and around the handler decides what is stored and what is sent.
 */
export class HttpIdempotency<Req> {
  readonly engine: Engine;
  readonly cache: LocalOutcomeCache | undefined;
  readonly #maxBodyBytes: number;

  constructor(
    shared: Shared,
    readonly route: ResolvedRoute<Req>,
  ) {
    this.engine = shared.engine;
    this.cache = shared.cache;
    this.#maxBodyBytes = shared.maxBodyBytes;
  }

  /** True when requests with this method are the layer's business. Adapters skip reading bodies otherwise. */
  handles(method: string): boolean {
    return this.route.methods.has(method);
  }

  /**
   * Decides a request. `accept` sends the 202 of a deferred request through the framework and returns what
   * `defer` gives the handler. Rejects only with errors of the user's own functions (scope, fingerprint).
   *
   * Not an `async` function: one would wrap the promise of `#execute` in another, which costs every request
   * an allocation and two ticks.
   */
  start<Sent>(
    view: RequestView<Req>,
    accept: (answer: HttpAnswer) => Sent,
    bodyUnparseable?: () => boolean,
  ): Promise<Start<Sent>> {
    try {
      const decided = this.#decide(view, bodyUnparseable);
      if (decided.kind !== 'execute') return Promise.resolve(decided);
      return this.#execute(decided.id, decided.key, decided.fingerprint, accept);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Everything `start` decides without the store: pass, answer at once (4xx, cached replay), or execute. */
  #decide(
    view: RequestView<Req>,
    bodyUnparseable: (() => boolean) | undefined,
  ): Start<never> | { readonly kind: 'execute'; id: string; key: string; fingerprint: string } {
    const { route } = this;
    if (!route.methods.has(view.method)) return PASS;
    let key: string | undefined;
    try {
      key = parseKeyHeader(view.header(route.header));
    } catch (error) {
      return { kind: 'answer', answer: answerForError(error)! };
    }
    if (key === undefined) {
      if (!route.required) return PASS;
      return {
        kind: 'answer',
        answer: problemAnswer('key-missing', `this request needs an ${route.header} header`),
      };
    }
    if (bodyUnparseable?.()) {
      return {
        kind: 'answer',
        answer: problemAnswer('body-unparseable', 'the body is declared JSON but does not parse'),
      };
    }
    const id = scopedKey(route.scope(view), key);
    const fingerprint = requestFingerprint(view, route.fingerprint);
    const cached = this.cache?.lookup(id, fingerprint);
    if (cached !== undefined && cached.kind !== 'miss') {
      if (cached.kind === 'hit') return { kind: 'answer', answer: cached.answer };
      return { kind: 'answer', answer: answerForError(new FingerprintMismatchError())! };
    }
    return { kind: 'execute', id, key, fingerprint };
  }

  async #execute<Sent>(
    id: string,
    key: string,
    fingerprint: string,
    accept: (answer: HttpAnswer) => Sent,
  ): Promise<Start<Sent>> {
    const { route } = this;
    const location = route.longRunning ? route.longRunning.location(id) : undefined;
    let context: HandlerContext<Sent> | undefined;
    let done: HandlerDone | undefined;
    let verdict: Verdict | undefined;
    // Settles once: with undefined when the handler may run, or with how the execution ended before that.
    let onFirst!: (step: FirstStep) => void;
    const first = new Promise<FirstStep>((resolve) => {
      onFirst = resolve;
    });
    let onDone!: (done: HandlerDone) => void;
    const handlerDone = new Promise<HandlerDone>((resolve) => {
      onDone = resolve;
    });
    const finishWith = (next: HandlerDone) => {
      if (done !== undefined) return;
      done = next;
      onDone(next);
    };
    const defer = (work: DeferredWork): Sent => {
      const longRunning = route.longRunning;
      if (longRunning === undefined || location === undefined) {
        throw new InvalidOptionsError('defer needs the longRunning option on this route');
      }
      const sent = accept(acceptedAnswer(location, longRunning.pollAfterMs));
      finishWith({ kind: 'deferred', work });
      return sent;
    };

    const execution = this.engine.execute<Outcome>({
      key: id,
      fingerprint,
      waitMs: route.waitMs,
      leaseMs: route.leaseMs,
      retentionMs: route.retentionMs,
      run: async (claim) => {
        context = new HandlerContext(key, claim, defer);
        onFirst(undefined);
        const result = await handlerDone;
        if (result.kind === 'response') return result.response;
        if (result.kind === 'error') throw result.error;
        return deferredOutcome(await result.work(claim));
      },
      settle: (response) => {
        verdict = this.#settle(response, context);
        return verdict;
      },
    });
    const finished = execution.then(
      (result) => {
        onFirst({ result });
        return this.#afterExecution(id, fingerprint, result, done, verdict);
      },
      (error: unknown) => {
        onFirst({ error });
        return this.#afterFailure(error, done);
      },
    );

    const step = await first;
    if (step === undefined) {
      return {
        kind: 'run',
        context: context!,
        respond: (response) => finishWith({ kind: 'response', response }),
        fail: (error) => finishWith({ kind: 'error', error }),
        finished,
      };
    }
    if ('result' in step && step.result.kind === 'replayed') {
      const answer = replayAnswer(step.result.outcome);
      this.#remember(id, fingerprint, answer, step.result.completedAt + route.retentionMs);
      return { kind: 'answer', answer };
    }
    // begin failed: map the engine's error, or run unprotected with failOpen.
    const error = 'error' in step ? step.error : new Error('oncely: the execution ended before it began');
    if (route.failOpen && isStoreUnavailableError(error)) return PASS;
    const answer = answerForError(
      error,
      location ? { accepted: { location, pollAfterMs: route.longRunning!.pollAfterMs } } : {},
    );
    if (answer === undefined) throw error;
    return { kind: 'answer', answer };
  }

  #settle(response: Outcome, context: HandlerContext<unknown> | undefined): Verdict {
    if (context?.skipped || !this.route.keep(response.status)) return { keep: false };
    const outcome = {
      status: response.status,
      headers: storableHeaders(response.headers, this.route.keepHeaders),
      body: response.body,
    };
    return context?.retentionMs === undefined
      ? { keep: true, outcome }
      : { keep: true, outcome, retentionMs: context.retentionMs };
  }

  #afterExecution(
    id: string,
    fingerprint: string,
    result: ExecuteResult<Outcome>,
    done: HandlerDone | undefined,
    verdict: Verdict | undefined,
  ): Finish {
    if (result.kind === 'replayed')
      return { kind: 'send', answer: replayAnswer(result.outcome), original: false };
    // A body over the cap replays from the store as "not retained"; the cache must not answer better than that.
    const cache = this.cache;
    if (
      cache !== undefined &&
      result.stored &&
      verdict?.keep &&
      verdict.outcome.body.byteLength <= this.#maxBodyBytes
    ) {
      const expiresAt = Date.now() + (verdict.retentionMs ?? this.route.retentionMs);
      cache.remember(id, fingerprint, replayAnswer({ retained: true, outcome: verdict.outcome }), expiresAt);
    }
    if (done?.kind === 'deferred') return DEFERRED;
    return { kind: 'send', answer: result.result, original: true };
  }

  #afterFailure(error: unknown, done: HandlerDone | undefined): Finish {
    if (done === undefined) return DEFERRED; // begin failed; `start` answered already, nobody reads this.
    if (done.kind === 'error' && error === done.error) return { kind: 'error', error };
    if (done.kind === 'deferred') return DEFERRED;
    // The effect happened and the handler answered, but the store refused to record it for long enough: the
    // client still gets the truth of this execution rather than a 503 that invites a duplicate under a new key.
    if (done.kind === 'response' && isStoreUnavailableError(error))
      return { kind: 'send', answer: done.response, original: true };
    const answer = answerForError(error);
    return answer === undefined ? { kind: 'error', error } : { kind: 'send', answer, original: false };
  }

  #remember(id: string, fingerprint: string, answer: HttpAnswer, expiresAt: number): void {
    this.cache?.remember(id, fingerprint, answer, expiresAt);
  }
}
