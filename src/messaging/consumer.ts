/**
 * @module The inbox (`Inbox`): a message handled at most once per scope whatever its broker's redeliveries, by
 * claiming its id through the engine, and parked once it keeps crashing its consumer. Every broker consumer and the
 * SQS layer build on it.
 */
import type { ExecutionContext } from '../core/claim.js';
import { PARKED_MARK } from '../core/clear-marks.js';
import { type Codec, structuredCodec } from '../core/codec.js';
import { Engine, type EngineOptions } from '../core/engine.js';
import { ENGINE_OPTION_NAMES } from '../core/engine-options.js';
import {
  InvalidOptionsError,
  isInProgressError,
  isTransactionEscapedError,
  type TransactionEscapedError,
} from '../core/errors.js';
import { scopedKey, validateKey } from '../core/key.js';
import type { HeaderPairs, Store } from '../core/store.js';
import { knownOptions, optionalFunction, requireFunction, wholeNumber } from '../core/validate.js';
import { type RunCount, RunCounter, runsKeyOf } from './inbox-runs.js';
import { checkHook, type Delivery, type InboxInstrumentation, type InboxProbe } from './instrumentation.js';
import { RunGate } from './run-gate.js';

/** What a handler gets besides the message: the claim (fencing token, attempt, abort signal) and the message id. */
export interface InboxContext extends ExecutionContext {
  readonly messageId: string;
}

export type InboxHandler<M, R> = (message: M, context: InboxContext) => Promise<R> | R;

export interface InboxOptions<M> extends Omit<EngineOptions, 'store' | 'instrumentation'> {
  /** Where the inbox records live (any Store; a transactional PostgresStore makes the effect and record atomic). */
  readonly store: Store;
  /** The message's id: the broker's deduplication id, or one you derive (an event id from the payload). */
  readonly messageId: (message: M) => string;
  /**
   * Namespace of this consumer: two consumers that must each process the same message once (two services on one
   * topic) need different scopes. Default `inbox`.
   */
  readonly scope?: string;
  /** Runs started without finishing after which a message is parked instead of run again. Default 5. */
  readonly maxAttempts?: number;
  /** Called once when a message is parked, before the parked mark is stored; if it throws, the next delivery retries it. */
  readonly onParked?: (message: M, info: ParkedInfo) => Promise<void> | void;
  /** How handler results are stored for duplicates. Default `structuredCodec`. */
  readonly codec?: Codec;
  /**
   * Spans and metrics: `otel()` from `oncely/otel`. Each delivery continues the trace in its headers, and the
   * engine's spans nest under it. Default none.
   */
  readonly instrumentation?: InboxInstrumentation;
}

export interface ParkedInfo {
  readonly messageId: string;
  /** Runs started so far (each crashed, timed out or threw). */
  readonly attempts: number;
}

export type InboxOutcome<R> =
  /** The handler ran and its outcome is stored: acknowledge. */
  | { readonly kind: 'processed'; readonly result: R; readonly attempt: number }
  /** Already processed before: acknowledge without running. `result` is the stored result when it was retained. */
  | { readonly kind: 'duplicate'; readonly result: R | undefined }
  /**
   * It kept failing, or its transaction escaped (`error`); it is marked parked and must go to a dead-letter queue
   * (and be acknowledged).
   */
  | {
      readonly kind: 'parked';
      readonly attempts: number;
      readonly first: boolean;
      /**
       * Transactional mode: the handler ended the inbox's transaction itself and its writes may have committed
       * outside the inbox record, so the message is never run again (the key keeps the failure for its retention;
       * `forget` lets it run). `onParked` is not called for it: the failure is stored already. Undefined when it
       * was parked for its attempts.
       */
      readonly error?: TransactionEscapedError;
    }
  /** Another consumer is processing it right now: redeliver later (after `retryAfterMs`), do not acknowledge. */
  | { readonly kind: 'busy'; readonly retryAfterMs: number }
  /** The handler threw, or the store failed: nothing is stored, redeliver later. */
  | { readonly kind: 'failed'; readonly error: unknown; readonly attempt: number | undefined }
  /** The message has no usable id (missing, empty, too long): it can never be deduplicated. Dead-letter it. */
  | { readonly kind: 'invalid'; readonly error: unknown };

/** What `Inbox#handle` is told about a delivery: what a broker helper knows (`Delivery`), and the deadline. */
export interface InboxHandleOptions extends Delivery {
  /** Ms since the epoch this process cannot outlive (a Lambda invocation's deadline); see `Inbox#handle`. */
  readonly leaseUntil?: number;
}

/** What a broker helper does with a message after `handle`. */
export type InboxAction = 'ack' | 'retry' | 'deadLetter';

export function actionFor(outcome: InboxOutcome<unknown>): InboxAction {
  switch (outcome.kind) {
    case 'processed':
    case 'duplicate':
      return 'ack';
    case 'parked':
    case 'invalid':
      return 'deadLetter';
    default:
      return 'retry';
  }
}

const OPTIONS = [...ENGINE_OPTION_NAMES, 'messageId', 'scope', 'maxAttempts', 'onParked', 'codec'] as const;
// Every delivery of a message is the same request: the id alone decides, whatever the payload bytes.
// Exported (not public API) for the dashboard, which finds parked messages by these marks.
export const FINGERPRINT = 'inbox-message';
export const PARKED_HEADER = PARKED_MARK[0];
const PARKED: unique symbol = Symbol('parked');

/**
 * The idempotent consumer: a redelivered message (same id) takes effect once. Each delivery claims the message's
 * key; the handler runs only for a new (or released) key; its outcome is stored before `handle` resolves, so the
 * broker helper acknowledges only what is recorded. A message whose runs keep starting without finishing (the
 * handler crashes the process, hangs past its lease, or throws) is parked after `maxAttempts` instead of looping.
 *
 * @example
 * const inbox = new Inbox(async (order: Order, { token }) => ship(order, token), {
 *   store: new RedisStore({ client: redis }),
 *   messageId: (order) => order.eventId,
 * });
 * const outcome = await inbox.handle(order); // 'processed' | 'duplicate' | 'parked' | 'busy' | 'failed' | 'invalid'
 */
export class Inbox<M, R = unknown> {
  readonly engine: Engine;
  readonly #handler: InboxHandler<M, R>;
  readonly #store: Store;
  readonly #messageId: (message: M) => string;
  /** `inbox:<scope>`: what the message keys are scoped to, and their spans' name. */
  readonly #scope: string;
  readonly #maxAttempts: number;
  readonly #onParked: InboxOptions<M>['onParked'];
  readonly #codec: Codec;
  /** Transactional mode's count of runs started; undefined for a plain store, whose own attempt counts them. */
  readonly #runs: RunCounter | undefined;
  readonly #gate = new RunGate();
  readonly #probe: InboxProbe | undefined;

  constructor(handler: InboxHandler<M, R>, options: InboxOptions<M>) {
    requireFunction('handler', handler);
    if (options === null || typeof options !== 'object')
      throw new InvalidOptionsError('Inbox: options are required');
    knownOptions('Inbox', options, OPTIONS);
    const {
      store,
      messageId,
      scope = 'inbox',
      maxAttempts,
      onParked,
      codec = structuredCodec,
      ...engineOptions
    } = options;
    requireFunction('messageId', messageId);
    optionalFunction('onParked', onParked);
    if (typeof scope !== 'string' || scope === '')
      throw new InvalidOptionsError('scope must be a non-empty string');
    this.engine = new Engine({ ...engineOptions, store });
    this.#handler = handler;
    this.#store = store;
    this.#messageId = messageId;
    this.#scope = `inbox:${scope}`;
    this.#maxAttempts = wholeNumber('maxAttempts', maxAttempts, 5, { min: 1 });
    this.#onParked = onParked;
    this.#codec = codec;
    const transactional = typeof (store as { beginTransaction?: unknown }).beginTransaction === 'function';
    this.#runs = transactional
      ? new RunCounter(store, {
          scope,
          leaseMs: this.engine.leaseMs,
          retentionMs: this.engine.retentionMs,
          engineOptions,
        })
      : undefined;
    const instrumentation = checkHook<InboxInstrumentation>('Inbox', engineOptions.instrumentation, [
      'engine',
      'inbox',
    ]);
    this.#probe = instrumentation?.inbox?.(scope);
  }

  /** The storage key of a message id (for `store.get` when inspecting). */
  keyOf(messageId: string): string {
    return scopedKey(this.#scope, validateKey(messageId));
  }

  /** Lets a parked (or processed) message run again on its next delivery. True if there was a record. */
  async forget(messageId: string): Promise<boolean> {
    const key = this.keyOf(messageId);
    const [main] = await Promise.all([this.#store.delete(key), this.#store.delete(runsKeyOf(key))]);
    return main;
  }

  /**
   * Handles one delivery. Broker helpers pass `redelivered` (RabbitMQ `fields.redelivered`, a JetStream
   * redelivery, a Redis entry claimed back):
   * - `true`: the message runs with nothing else in flight in this process, so if it is the one that crashes the
   *   process, only its own attempts rise;
   * - `false` (a first delivery) lets transactional mode skip counting the run: a first run that crashes is
   *   counted when the message comes back redelivered. Leave it out when unknown: every run is then counted.
   *
   * `headers` (the broker helpers pass the message's) carry the producer's trace context, continued while the
   * message is handled when the inbox is instrumented; `source` names the broker and stream for its spans.
   *
   * `leaseUntil`: the time this process cannot outlive (a Lambda invocation's deadline, ms since the epoch); the
   * message's claim never holds past it, so a consumer killed there leaves the message to the next delivery.
   */
  handle(message: M, delivery: InboxHandleOptions = {}): Promise<InboxOutcome<R>> {
    let messageId: string;
    // The one check of the id: everything after takes it as valid.
    try {
      messageId = validateKey(this.#messageId(message));
    } catch (error) {
      const invalid: InboxOutcome<R> = { kind: 'invalid', error };
      return this.#probe === undefined
        ? Promise.resolve(invalid)
        : this.#probe.handle(delivery, undefined, () => Promise.resolve(invalid));
    }
    const { redelivered, leaseUntil } = delivery;
    const lease = leaseUntil === undefined ? {} : { leaseUntil };
    const run = () =>
      this.#gate.run(redelivered === true, () => this.#handle(message, messageId, redelivered, lease));
    return this.#probe === undefined ? run() : this.#probe.handle(delivery, messageId, run);
  }

  async #handle(
    message: M,
    messageId: string,
    redelivered: boolean | undefined,
    lease: { readonly leaseUntil?: number },
  ): Promise<InboxOutcome<R>> {
    const key = scopedKey(this.#scope, messageId);
    const runs = this.#runs;
    if (runs === undefined) return this.#execute(message, messageId, key, undefined, lease);
    // Transactional mode (see inbox-runs.ts): the runs record is claimed before the transaction, so no second
    // connection is needed while the transaction holds one. A first delivery cannot have run before, so it skips
    // the two extra round trips; its redelivery counts it (+1).
    if (redelivered === false) return this.#execute(message, messageId, key, 1, lease);
    let run: RunCount;
    try {
      // Bounded like every engine call: a hung store makes this delivery `failed` (redelivered later), never a
      // `handle` that does not return.
      run = await runs.count(key, lease.leaseUntil);
    } catch (error) {
      return { kind: 'failed', error, attempt: undefined };
    }
    if (run.kind === 'busy') return { kind: 'busy', retryAfterMs: run.retryAfterMs };
    const counted = run.attempt + (redelivered === true ? 1 : 0);
    const outcome = await this.#execute(message, messageId, key, counted, lease);
    if (run.claim !== undefined) {
      const finished =
        outcome.kind === 'processed' || outcome.kind === 'duplicate' || outcome.kind === 'parked';
      await runs.end(run.claim, finished);
    }
    return outcome;
  }

  async #execute(
    message: M,
    messageId: string,
    key: string,
    counted: number | undefined,
    lease: { readonly leaseUntil?: number },
  ): Promise<InboxOutcome<R>> {
    let attempts: number | undefined;
    try {
      const executed = await this.engine.execute<{ value: R } | typeof PARKED>({
        ...lease,
        key,
        fingerprint: FINGERPRINT,
        scope: this.#scope,
        run: async (context) => {
          attempts = counted ?? context.attempt;
          if (attempts > this.#maxAttempts) {
            await this.#onParked?.(message, { messageId, attempts: attempts - 1 });
            return PARKED;
          }
          return { value: await this.#handler(message, inboxContext(context, messageId)) };
        },
        settle: (result) => ({
          keep: true,
          outcome:
            result === PARKED
              ? { status: 0, headers: [[PARKED_HEADER, PARKED_MARK[1]]], body: new Uint8Array(0) }
              : { status: 0, headers: [], body: this.#codec.encode(result.value) },
        }),
      });
      if (executed.kind === 'executed') {
        const { result } = executed;
        if (result === PARKED) return { kind: 'parked', attempts: (attempts ?? 1) - 1, first: true };
        return { kind: 'processed', result: result.value, attempt: attempts ?? executed.attempt };
      }
      const opened = executed.outcome;
      const headers: HeaderPairs = opened.retained ? opened.outcome.headers : opened.headers;
      if (headers.some(([name, value]) => name === PARKED_HEADER && value === PARKED_MARK[1])) {
        return { kind: 'parked', attempts: this.#maxAttempts, first: false };
      }
      const result = opened.retained ? (this.#codec.decode(opened.outcome.body) as R) : undefined;
      return { kind: 'duplicate', result };
    } catch (error) {
      if (isInProgressError(error)) return { kind: 'busy', retryAfterMs: error.retryAfterMs };
      // A rolled-back escape committed nothing: it fails like a throw, and `maxAttempts` parks it if it repeats.
      if (isTransactionEscapedError(error) && error.keyOutcome !== 'released') {
        return { kind: 'parked', attempts: attempts ?? 1, first: !error.replayed, error };
      }
      return { kind: 'failed', error, attempt: attempts };
    }
  }
}

/** The claim's context plus the message id; `signal` stays a getter, so no AbortController is made unless read. */
function inboxContext(context: ExecutionContext, messageId: string): InboxContext {
  return {
    key: context.key,
    token: context.token,
    attempt: context.attempt,
    takeover: context.takeover,
    transaction: context.transaction,
    messageId,
    get signal() {
      return context.signal;
    },
  };
}
