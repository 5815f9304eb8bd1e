/**
 * @module A request that owns its key (`Running`), framework-free: the handler's context, then its response stored
 * (or its key let go) and what the adapter sends decided.
 */
import type { Claim } from '../core/claim.js';
import { InvalidOptionsError, isStoreUnavailableError } from '../core/errors.js';
import type { ReleaseReason } from '../core/events.js';
import type { Outcome } from '../core/record.js';
import type { HeaderPairs } from '../core/store.js';
import { acceptedAnswer, answerForError, replayAnswer } from './answers.js';
import { withoutContentCoding } from './content-coding.js';
import { type DeferredWork, deferredOutcome, HandlerContext, type IdempotencyContext } from './context.js';
import type { LocalOutcomeCache } from './local-cache.js';
import type { Notices } from './notices.js';
import type { ResolvedRoute } from './options.js';
import { type HeaderSnapshot, snapshotHeaders, storedHeaders } from './outcome-policy.js';
import type { HttpAnswer } from './problem.js';
import type { RunTimes } from './run-times.js';

/** What the adapter sends once the handler's outcome is settled in the store (stored before sent). */
export type Finish =
  /** Send `answer`; `original` says it is the handler's own response, still in the framework's hands. */
  | { readonly kind: 'send'; readonly answer: HttpAnswer; readonly original: boolean }
  /** `defer` already sent 202 Accepted; the work goes on in the background. */
  | { readonly kind: 'deferred' }
  /** The handler threw: let the framework's error handling answer (nothing is stored). */
  | { readonly kind: 'error'; readonly error: unknown };

/** The route's side of every `Running`, made once per route: where the outcome goes besides the store. */
export interface RunningTarget {
  readonly route: ResolvedRoute<unknown>;
  readonly cache: LocalOutcomeCache | undefined;
  readonly maxBodyBytes: number;
  readonly notices: Notices;
  /** Where the handler's run time is observed, under the request's `runs`. */
  readonly runTimes: RunTimes | undefined;
}

/** The request's side: the one a claim was won for, as the flow decided it before `begin`. */
export interface ClaimedRequest {
  /** The client's key, as sent. */
  readonly clientKey: string;
  /** The scoped key: the record's id in the store. */
  readonly key: string;
  readonly fingerprint: string;
  /** Method and route (template or path): what run times are estimated per. */
  readonly runs: string;
}

const DEFERRED: Finish = { kind: 'deferred' };
// How far past maxBodyBytes a compressed body may decode before it is kept encoded (a bound on memory, not a rule).
const DECODED_LIMIT_FACTOR = 64;

/**
 * A request that owns its key: the handler runs with `context`, then the adapter hands its response to `respond`
 * (or its error to `fail`), which completes or releases the claim and says what to send. Settled once; a
 * deferred request settles in the background instead.
 */
export class Running<Sent> {
  readonly kind = 'run';
  readonly context: IdempotencyContext<Sent>;
  /**
   * Most body bytes an adapter holds back before it must let the response go out as written: the engine's
   * `maxBodyBytes`. A body the handler hands over whole (one `end`, a Buffer) is already in memory and is stored
   * (as not retained when it is over the cap); only a body written in pieces is cut off here. A field, not a
   * getter: adapters read it once per request, as they hand over.
   */
  readonly holdLimit: number;
  readonly #handler: HandlerContext<Sent>;
  readonly #target: RunningTarget;
  readonly #claim: Claim;
  readonly #request: ClaimedRequest;
  /** Settled once: by `respond`, `fail`, `defer` or `ended`; `streaming` while the response goes out unheld. */
  #state: 'open' | 'streaming' | 'settled' = 'open';
  readonly #startedAt = Date.now();
  readonly #accept: (answer: HttpAnswer) => Sent;
  #before: HeaderSnapshot | undefined;

  /**
   * Two objects that exist already rather than one options object made per request: the route's `target` (made
   * once) and the flow's decision for this `request`; then the claim won for it, and how a 202 is sent (`accept`).
   */
  constructor(
    target: RunningTarget,
    request: ClaimedRequest,
    claim: Claim,
    accept: (answer: HttpAnswer) => Sent,
  ) {
    this.#target = target;
    this.#request = request;
    this.#claim = claim;
    this.#accept = accept;
    this.holdLimit = target.maxBodyBytes;
    this.#handler = new HandlerContext(request.clientKey, claim, this);
    this.context = this.#handler;
  }

  /**
   * The adapter hands control to the handler: `headers` are those the response has now (set by middleware before
   * the layer). Only headers the handler adds or changes are stored; a replay keeps its own middleware's.
   */
  handOver(headers: HeaderPairs): void {
    this.#before = snapshotHeaders(headers);
  }

  /** The handler answered: store the response (or let the key go), then send it. */
  respond(response: Outcome): Promise<Finish> {
    if (this.#state === 'settled') return Promise.resolve(DEFERRED);
    this.#state = 'settled';
    this.#observed();
    const original: Finish = { kind: 'send', answer: response, original: true };
    const kept = this.#kept(response);
    if (kept === undefined) return this.#released('notKept', original);
    const retentionMs = this.#handler.retentionMs;
    return this.#claim.complete(kept, retentionMs === undefined ? undefined : { retentionMs }).then(
      () => {
        this.#remember(kept, retentionMs);
        return original;
      },
      (error: unknown) => {
        // On a plain store the effect happened and the handler answered, but the store could not confirm the
        // record: the client still gets the truth of this execution rather than a 503 that invites a duplicate
        // under a new key. In transactional mode the effect commits with the record, so a failed commit means
        // it rolled back (or its fate is unknown): a 503 sends the client back with the same key, and the retry
        // replays the outcome or runs the effect once.
        if (isStoreUnavailableError(error) && this.#claim.transaction === undefined) return original;
        const answer = answerForError(error);
        return answer === undefined ? { kind: 'error', error } : { kind: 'send', answer, original: false };
      },
    );
  }

  /**
   * The response goes out as the handler writes it and is not stored: it grew past `holdLimit` in pieces, or it is
   * an event stream (`text/event-stream`), which is never held. The key stays claimed while it streams (a duplicate
   * gets 409); the adapter calls `ended` when the response's connection is done with it, and the key is released.
   */
  streaming(eventStream: boolean): void {
    if (this.#state === 'settled') return;
    this.#state = 'streaming';
    const limit = this.#target.maxBodyBytes;
    this.#target.notices.once(
      'streamed',
      () =>
        `a response was sent as it was written and not stored (${eventStream ? 'it is text/event-stream' : `it grew past maxBodyBytes, ${limit} bytes, in pieces`}); its key is released when it ends, so a retry runs the handler again. Said once; see docs/http.md#large-and-streamed-responses.`,
    );
  }

  /** The response's connection is done (finished, or closed before): a streaming claim lets its key go now. */
  ended(): Promise<void> {
    const state = this.#state;
    if (state === 'settled') return Promise.resolve();
    this.#state = 'settled';
    // The response is out: a refused release (an escaped transaction) has no one left to tell; the key keeps it.
    return this.#release(state === 'streaming' ? 'notKept' : 'error').catch(() => {});
  }

  /** The handler threw before answering: the key is released and the framework answers. */
  fail(error: unknown): Promise<Finish> {
    if (this.#state === 'settled') return Promise.resolve(DEFERRED);
    this.#state = 'settled';
    this.#observed();
    return this.#released('error', { kind: 'error', error });
  }

  /**
   * The response as it is to be stored, or undefined when the route's policy or the handler says not to; its own
   * retention, if any, is the handler's `retentionMs`.
   */
  #kept(response: Outcome): Outcome | undefined {
    const handler = this.#handler;
    const { route } = this.#target;
    if (handler.skipped || !route.keep(response.status)) return undefined;
    const headers = storedHeaders(response.headers, this.#before, route.keepHeaders);
    // Compressed for this request's Accept-Encoding (by middleware, or by the handler): stored as produced, so a
    // replay suits any Accept-Encoding. Bounded: a body that would decode past this stays as it was encoded.
    const identity = withoutContentCoding(
      headers,
      response.body,
      DECODED_LIMIT_FACTOR * this.#target.maxBodyBytes,
    );
    // The handler's response as it is, when nothing of it was left out or decoded.
    if (identity === undefined && headers === response.headers) return response;
    return {
      status: response.status,
      headers: identity?.headers ?? headers,
      body: identity?.body ?? response.body,
    };
  }

  #release(reason: ReleaseReason): Promise<void> {
    return this.#claim.release(reason);
  }

  /**
   * Releases, then `finish`. A transactional claim refuses the release when the handler ended its transaction
   * itself (`TransactionEscapedError`): that answer (500 `transaction-escaped`) is sent instead.
   */
  #released(reason: ReleaseReason, finish: Finish): Promise<Finish> {
    return this.#release(reason).then(
      () => finish,
      (error: unknown) => {
        const answer = answerForError(error);
        if (answer === undefined) throw error;
        return { kind: 'send', answer, original: false };
      },
    );
  }

  #observed(): void {
    this.#target.runTimes?.observe(this.#request.runs, Date.now() - this.#startedAt);
  }

  /**
   * The handler's `defer`: sends 202 now and finishes `work` under the same claim; its answer is stored as the key's
   * outcome.
   */
  defer(work: DeferredWork): Sent {
    const longRunning = this.#target.route.longRunning;
    if (longRunning === undefined)
      throw new InvalidOptionsError('defer needs the longRunning option on this route');
    if (this.#state === 'settled') throw new InvalidOptionsError('defer: this request has answered already');
    this.#state = 'settled';
    const sent = this.#accept(
      acceptedAnswer(longRunning.location(this.#request.key), longRunning.pollAfterMs),
    );
    void this.#finishDeferred(work);
    return sent;
  }

  async #finishDeferred(work: DeferredWork): Promise<void> {
    let kept: Outcome | undefined;
    try {
      kept = this.#kept(deferredOutcome(await work(this.#claim)));
    } catch {
      // The status route answers from the store, which keeps an escaped transaction's failure.
      await this.#release('error').catch(() => {});
      return;
    }
    if (kept === undefined) return this.#release('notKept').catch(() => {});
    const retentionMs = this.#handler.retentionMs;
    try {
      await this.#claim.complete(kept, retentionMs === undefined ? undefined : { retentionMs });
      this.#remember(kept, retentionMs);
    } catch {
      // Lost or unconfirmed: the status route answers from the store, which knows which it was.
    }
  }

  #remember(outcome: Outcome, retentionMs: number | undefined): void {
    const { cache, maxBodyBytes, route } = this.#target;
    // A body over the cap replays from the store as "not retained"; the cache must not answer better than that.
    if (cache === undefined || outcome.body.byteLength > maxBodyBytes) return;
    const expiresAt = Date.now() + (retentionMs ?? route.retentionMs);
    const { key, fingerprint } = this.#request;
    cache.remember(key, fingerprint, replayAnswer({ retained: true, outcome }), expiresAt);
  }
}
