/**
 * @module The engine's options, checked once at construction (`InvalidOptionsError`), with their defaults and the one
 * list of their names the wrappers and adapters accept.
 */
import type { CircuitBreakerOptions } from './circuit-breaker.js';
import { EncryptedStore } from './encrypted-store.js';
import { type EncryptionOptions, resolveEncryption } from './encryption-keys.js';
import { InvalidOptionsError } from './errors.js';
import type { EventHandler } from './events.js';
import { checkInstrumentation, type Instrumentation } from './instrumentation.js';
import { type BlobStore, defaultEnvelopeOptions, type EnvelopeOptions } from './record.js';
import type { Store } from './store.js';
import { knownOptions, wholeNumber } from './validate.js';

export interface EngineOptions {
  /** Where records live. Required. */
  readonly store: Store;
  /** How long a claim holds before another caller may take over. Default 30,000 ms. */
  readonly leaseMs?: number;
  /** How long a completed (or in-progress) record is kept. Default 86,400,000 ms (24 h); at least `leaseMs`. */
  readonly retentionMs?: number;
  /** A store call slower than this fails with `StoreUnavailableError`. Default 2,000 ms. */
  readonly storeTimeoutMs?: number;
  /** Circuit breaker around the store; `false` turns it off. Default 5 failures, then a probe every 250 ms. */
  readonly breaker?: CircuitBreakerOptions | false;
  /** Bodies of at least this many bytes are compressed. Default 1,024 bytes. */
  readonly compressAboveBytes?: number;
  /** Bodies above this many bytes go to `blobStore`, or are not retained. Default 1,048,576 bytes. */
  readonly maxBodyBytes?: number;
  readonly blobStore?: BlobStore;
  /** Receives every engine event (acquired, replayed, conflict, fenced, leaseLost, …). */
  readonly onEvent?: EventHandler;
  /** Spans and metrics of every execution and store call: `otel()` from `oncely/otel`. Default none. */
  readonly instrumentation?: Instrumentation;
  /**
   * Seal every stored outcome with AES-256-GCM (status, headers and body), bound to its storage key; a record
   * that cannot be opened fails the request with `RecordUnreadableError`. Default none (docs/encryption.md).
   */
  readonly encryption?: EncryptionOptions;
}

/** The one list of engine option names: the wrappers and adapters accept these beside their own. */
export const ENGINE_OPTION_NAMES = [
  'store',
  'leaseMs',
  'retentionMs',
  'storeTimeoutMs',
  'breaker',
  'compressAboveBytes',
  'maxBodyBytes',
  'blobStore',
  'onEvent',
  'instrumentation',
  'encryption',
] as const satisfies ReadonlyArray<keyof EngineOptions>;

export interface ResolvedEngineOptions {
  readonly store: Store;
  readonly leaseMs: number;
  readonly retentionMs: number;
  readonly storeTimeoutMs: number;
  readonly breaker: CircuitBreakerOptions | false;
  readonly envelope: EnvelopeOptions;
  readonly onEvent: EventHandler | undefined;
  readonly instrumentation: Instrumentation | undefined;
}

/** Validates engine options once, at construction: bad options throw `InvalidOptionsError` here, never later. */
export function resolveEngineOptions(options: EngineOptions): ResolvedEngineOptions {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionsError('engine options are required ({ store })');
  knownOptions('engine', options, ENGINE_OPTION_NAMES);
  // Wrapped here, so everything the engine does with the store (begin, complete, get, transactions) is sealed.
  const checked = checkStore(options.store);
  const store =
    options.encryption === undefined
      ? checked
      : new EncryptedStore(checked, resolveEncryption(options.encryption));
  const leaseMs = wholeNumber('leaseMs', options.leaseMs, 30_000, { min: 10 });
  const retentionMs = wholeNumber('retentionMs', options.retentionMs, Math.max(86_400_000, leaseMs), {
    min: 1,
  });
  // A record that expires under a running owner would let a duplicate run the effect again.
  if (retentionMs < leaseMs)
    throw new InvalidOptionsError(`retentionMs (${retentionMs}) must be at least leaseMs (${leaseMs})`);
  return {
    store,
    leaseMs,
    retentionMs,
    storeTimeoutMs: wholeNumber('storeTimeoutMs', options.storeTimeoutMs, 2_000, { min: 1 }),
    breaker: options.breaker ?? {},
    envelope: {
      compressAboveBytes: wholeNumber(
        'compressAboveBytes',
        options.compressAboveBytes,
        defaultEnvelopeOptions.compressAboveBytes,
      ),
      maxBodyBytes: wholeNumber('maxBodyBytes', options.maxBodyBytes, defaultEnvelopeOptions.maxBodyBytes),
      blobStore: options.blobStore,
    },
    onEvent: options.onEvent,
    instrumentation: checkInstrumentation(options.instrumentation),
  };
}

/** A store, or an error that says what was passed instead (a raw driver client is the usual mistake). */
function checkStore(store: unknown): Store {
  if (store !== null && typeof store === 'object' && typeof (store as Store).begin === 'function')
    return store as Store;
  const has = (name: string) =>
    store !== null &&
    typeof store === 'object' &&
    typeof (store as Record<string, unknown>)[name] === 'function';
  if (has('evalsha') || has('defineCommand'))
    throw new InvalidOptionsError(
      "store: this is a Redis client, not a store; wrap it: new RedisStore({ client }) from 'oncely/redis'",
    );
  if (has('query'))
    throw new InvalidOptionsError(
      "store: this is a PostgreSQL client or pool, not a store; wrap it: new PostgresStore({ pool }) from 'oncely/postgres'",
    );
  throw new InvalidOptionsError('a store is required (for example new MemoryStore())');
}
