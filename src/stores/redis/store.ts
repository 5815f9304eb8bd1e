/**
 * @module The Redis store: each transition of the state machine one Lua script on the record's key, behind the
 * `Store` contract. Options, record bytes, replies, waiting and stats each have a file of their own beside it; this
 * one wires them together.
 */
import { StoreUnavailableError } from '../../core/errors.js';
import type { StoreInspector } from '../../core/inspection.js';
import type {
  BeginInput,
  BeginResult,
  CompleteInput,
  KeyRecord,
  ReleaseInput,
  RenewInput,
  Store,
  StoreEndpoint,
  TransitionResult,
  WaitForOptions,
} from '../../core/store.js';
import { ScriptBatcher } from './batcher.js';
import { transportFor } from './clients/recognise.js';
import { toStoreError } from './connection.js';
import { fingerprintRegion } from './fingerprint-region.js';
import { RedisInspector } from './inspect.js';
import { type KeyLayout, keyLayout } from './keys.js';
import { LabelArgs } from './label-args.js';
import { type RedisStoreOptions, type ResolvedOptions, resolveOptions } from './options.js';
import { encodeOutcome } from './record.js';
import { decodeBeginReply, decodeGetReply, decodeReply, decodeTransitionReply } from './replies.js';
import { commandNames, type ScriptArg, type ScriptName } from './scripts.js';
import { type RedisStoreStats, scanStats } from './stats.js';
import type { RedisTransport, ScriptCall } from './transport.js';
import { SettleWaiter } from './waiter.js';

/** Each script's driver errors as oncely errors: one handler per script, made once rather than one per call. */
const FAILED = Object.fromEntries(
  (Object.keys(commandNames) as ScriptName[]).map((name) => [
    name,
    (error: unknown): never => {
      throw toStoreError(name, error);
    },
  ]),
) as Record<ScriptName, (error: unknown) => never>;

/** 1 or 0 from delete-1 and watch-1; their `{-1, what}` throws `CorruptRecordError` from `decodeReply`. */
const decodeFlag = (reply: unknown): boolean => {
  if (Array.isArray(reply)) decodeReply(reply);
  return reply === 1;
};

/**
 * The Redis store: one STRING per record at `<prefix>:{<key>}` (layout 4: a packed header, the fingerprint
 * region, the label of a record that has one, and the outcome; see `scripts/lib/record.lua`), every transition one
 * Lua script on that key, so each is atomic and the store runs unchanged on standalone Redis, Sentinel and Cluster
 * (Redis >= 6.2), through the caller's ioredis, iovalkey, node-redis or Valkey GLIDE client (`clients/`: one
 * transport each), its calls of one event-loop turn batched per node. A new request costs two round trips (begin, complete), a replay
 * one: `begin` returns the stored record itself.
 * Fencing tokens and leases are checked inside the scripts; time comes from Redis `TIME`. Records of oncely 0.1
 * (a HASH each) and of versions before layout 4 are read as they are and rewritten by the next claim
 * (docs/stores/redis.md, "Upgrading").
 *
 * @example
 * import { Redis } from 'ioredis';
 * import { Engine } from 'oncely';
 * import { RedisStore } from 'oncely/redis';
 *
 * const client = new Redis({ enableOfflineQueue: false, maxRetriesPerRequest: 0 });
 * client.on('error', (error) => console.error('redis:', error.message)); // else every reconnect logs an unhandled error
 * const store = new RedisStore({ client, prefix: 'payments' });
 * const engine = new Engine({ store });
 */
export class RedisStore implements Store {
  readonly name = 'redis';
  readonly #options: ResolvedOptions;
  readonly #transport: RedisTransport;
  readonly #batcher: ScriptBatcher | undefined;
  readonly #keys: KeyLayout;
  readonly #waiter: SettleWaiter;
  readonly #labels = new LabelArgs();
  #inspector: RedisInspector | undefined;
  #closed = false;

  constructor(options: RedisStoreOptions) {
    this.#options = resolveOptions(options);
    this.#transport = transportFor(
      this.#options.client,
      this.#options.subscriber,
      this.#options.connectWaitMs,
    );
    // A transport that batches on its own (ioredis on a standalone server corks its socket) needs no batcher.
    this.#batcher =
      this.#options.pipeline && this.#transport.send === undefined
        ? new ScriptBatcher(this.#transport)
        : undefined;
    this.#keys = keyLayout(this.#options.prefix);
    this.#waiter = new SettleWaiter({
      subscriber: () => this.#transport.subscriber(),
      channel: (key) => this.#keys.channel(key),
      pending: (key) => this.#run('watch', key, [this.#now()], decodeFlag),
      pollIntervalMs: this.#options.pollIntervalMs,
    });
  }

  /** The server as the client was configured, for telemetry. */
  get endpoint(): StoreEndpoint {
    return this.#transport.endpoint;
  }

  /** The key layout (prefix, record key and channel of a store key), for tools and tests. */
  get keys(): KeyLayout {
    return this.#keys;
  }

  /** Bounded listing (SCAN within `scanLimit` keys) and one record's view, for tools (see `StoreInspector`). */
  get inspector(): StoreInspector {
    this.#inspector ??= new RedisInspector({
      transport: this.#transport,
      keys: this.#keys,
      clock: this.#options.clock,
      get: (key) => this.get(key),
    });
    return this.#inspector;
  }

  begin({ key, fingerprint, leaseMs, retentionMs, label }: BeginInput): Promise<BeginResult> {
    let args: ScriptArg[];
    try {
      // No label, no fifth argument: Redis pays for every argument a call has.
      const region = fingerprintRegion(fingerprint);
      args =
        label === undefined
          ? [region, leaseMs, retentionMs, this.#now()]
          : [region, leaseMs, retentionMs, this.#now(), this.#labels.of(label)];
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#run('begin', key, args, decodeBeginReply, true);
  }

  complete({ key, token, outcome, retentionMs }: CompleteInput): Promise<TransitionResult> {
    let args: ScriptArg[];
    try {
      args = [token, retentionMs, this.#now(), this.#keys.channel(key), encodeOutcome(outcome)];
    } catch (error) {
      // A malformed outcome rejects like every other failure of this method; it never throws synchronously.
      return Promise.reject(error);
    }
    if (this.#options.durable !== undefined) return this.#completeDurably(key, args);
    return this.#run('complete', key, args, decodeTransitionReply);
  }

  release({ key, token }: ReleaseInput): Promise<TransitionResult> {
    return this.#run('release', key, [token, this.#now(), this.#keys.channel(key)], decodeTransitionReply);
  }

  renew({ key, token, leaseMs }: RenewInput): Promise<TransitionResult> {
    return this.#run('renew', key, [token, leaseMs, this.#now()], decodeTransitionReply);
  }

  get(key: string): Promise<KeyRecord | undefined> {
    return this.#run('get', key, [this.#now()], (reply) => decodeGetReply(key, reply), true);
  }

  delete(key: string): Promise<boolean> {
    return this.#run('delete', key, [this.#now(), this.#keys.channel(key)], decodeFlag);
  }

  /**
   * Resolves true once the key is no longer in progress, false at the timeout: a pub/sub notice on one shared
   * subscriber connection, a re-check after subscribing, and polling every `pollIntervalMs` as the fallback (the
   * only way on a GLIDE client without a `subscriber`).
   */
  waitFor(key: string, options: WaitForOptions): Promise<boolean> {
    return this.#waiter.wait(key, options);
  }

  /** Counts records by state with a bounded SCAN of the prefix (every master of a Cluster). */
  async stats(): Promise<RedisStoreStats> {
    if (this.#closed) throw new StoreUnavailableError('the redis store is closed');
    try {
      return await scanStats(this.#transport, this.#keys, this.#options.clock, this.#options.statsScanLimit);
    } catch (error) {
      throw toStoreError('stats', error);
    }
  }

  /** Stops the waiters and closes the subscriber connection the store made; never the caller's client. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#waiter.close();
  }

  /** Time travels to the scripts only when a clock was given; '' makes them read Redis `TIME`. */
  #now(): string {
    const clock = this.#options.clock;
    return clock === undefined ? '' : String(clock());
  }

  /**
   * Runs one script and decodes its reply. Driver errors become oncely errors; a reply that does not decode
   * throws from `decode` as it is (a `CorruptRecordError`). One `then` per call: this is every request's path.
   */
  #run<T>(
    name: ScriptName,
    key: string,
    args: readonly ScriptArg[],
    decode: (reply: unknown) => T,
    bytes = false,
  ): Promise<T> {
    if (this.#closed)
      return Promise.reject(new StoreUnavailableError(`redis ${name} refused: the store is closed`));
    const onError = FAILED[name];
    const call: ScriptCall = { name, key: this.#keys.record(key), args, bytes };
    const gate = this.#transport.gate(name);
    if (gate !== undefined) return gate.then(() => this.#send(call)).then(decode, onError);
    return this.#send(call).then(decode, onError);
  }

  #send(call: ScriptCall): Promise<unknown> {
    const send = this.#transport.send;
    if (this.#batcher !== undefined) return this.#batcher.run(call);
    try {
      if (send !== undefined) return send(call, this.#options.pipeline);
      return this.#transport.scripts([call])[0]!;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * The complete and a `WAIT` in one pipeline (one round trip, routed to the record's primary on a Cluster). A
   * shortfall is reported, not hidden: the record is on the primary but may be lost if it fails right now.
   */
  async #completeDurably(key: string, args: readonly ScriptArg[]): Promise<TransitionResult> {
    const { replicas, timeoutMs } = this.#options.durable!;
    if (this.#closed) throw new StoreUnavailableError('redis complete refused: the store is closed');
    let replies: [unknown, unknown];
    try {
      await this.#transport.gate('complete');
      const call: ScriptCall = { name: 'complete', key: this.#keys.record(key), args, bytes: false };
      replies = await this.#transport.scriptAndWait(call, replicas, timeoutMs);
    } catch (error) {
      throw toStoreError('complete', error);
    }
    const result = decodeTransitionReply(replies[0]);
    const acknowledged = replies[1];
    if (result.kind === 'ok' && (typeof acknowledged !== 'number' || acknowledged < replicas)) {
      throw new StoreUnavailableError(
        `redis complete: the record is stored on the primary but ${String(acknowledged)} of ${replicas} replicas acknowledged it within ${timeoutMs} ms; it can be lost if the primary fails now`,
        { outcomeStored: true },
      );
    }
    return result;
  }
}
