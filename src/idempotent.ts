/**
 * @module `idempotent(fn, options)`: the engine behind a plain function call rather than an HTTP request, for jobs,
 * scripts and message handlers: results are encoded by a codec, keys scoped by the function's name, and the stored
 * value replayed to later calls with the same key.
 */
import type { ExecutionContext } from './core/claim.js';
import { type Codec, structuredCodec } from './core/codec.js';
import { Engine } from './core/engine.js';
import { ENGINE_OPTION_NAMES, type EngineOptions } from './core/engine-options.js';
import { InvalidOptionsError, ResponseNotRetainedError } from './core/errors.js';
import { canonicalJson, fingerprintOf } from './core/fingerprint.js';
import { scopedKey, validateKey } from './core/key.js';
import type { Store } from './core/store.js';
import { knownOptions, optionalFunction, requireFunction, wholeNumber } from './core/validate.js';
import { sharedMemoryStore } from './stores/memory.js';

const OWN_OPTION_NAMES = ['key', 'scope', 'fingerprint', 'codec', 'keep', 'waitMs'] as const;

export interface IdempotentOptions<I, R> extends Omit<EngineOptions, 'store'> {
  /** Where results are kept. Default: one in-memory store shared by the process. */
  readonly store?: Store;
  /** Derives the idempotency key from the input (an order id, a message id, a client's key). Required. */
  readonly key: (input: I) => string;
  /**
   * Keys of different scopes never meet. Default: the function's name; give one explicitly when two wrapped
   * functions share a name, or when the name may change in a refactor (keys would then stop matching).
   */
  readonly scope?: string;
  /**
   * What identifies the request beyond its key, hashed as canonical JSON: the same key with another fingerprint
   * is a `FingerprintMismatchError`. Default: the whole input.
   */
  readonly fingerprint?: (input: I) => unknown;
  /** How results become bytes. Default `structuredCodec` (Date, Map, Set, BigInt, typed arrays…). */
  readonly codec?: Codec;
  /** Whether a result is stored; a result not kept lets a later call run again. Default: keep every result. */
  readonly keep?: (result: R) => boolean;
  /** Wait up to this many ms for a concurrent duplicate, then replay its result. Default 0: throw `InProgressError`. */
  readonly waitMs?: number;
}

export interface Execution<R> {
  readonly value: R;
  /** True when the value came from the store rather than from running the function. */
  readonly replayed: boolean;
}

export interface IdempotentFunction<I, R> {
  (input: I): Promise<R>;
  /** Like calling the function, but says whether the value was replayed. */
  execute(input: I): Promise<Execution<R>>;
  readonly engine: Engine;
}

/**
 * Wraps `fn` so that calls with the same key take effect once: the first runs, later ones get the stored
 * result (decoded, so an equal value rather than the same object), concurrent ones get `InProgressError` (or
 * wait, with `waitMs`), and a call with the same key but other input gets `FingerprintMismatchError`.
 * A thrown error is not stored: the key is released and a later call runs again.
 *
 * @example
 * const charge = idempotent(async (order: Order, { token }) => payments.charge(order, token), {
 *   key: (order) => order.id,
 *   store: new RedisStore({ client }),
 * });
 * await charge(order); // runs
 * await charge(order); // replays the stored receipt
 */
export function idempotent<I, R>(
  fn: (input: I, context: ExecutionContext) => Promise<R> | R,
  options: IdempotentOptions<I, R>,
): IdempotentFunction<I, R> {
  requireFunction('fn', fn);
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionsError('idempotent: options are required ({ key, scope })');
  knownOptions('idempotent', options, [...OWN_OPTION_NAMES, ...ENGINE_OPTION_NAMES]);
  const { store, key, scope, fingerprint, codec = structuredCodec, keep, waitMs, ...engineOptions } = options;
  requireFunction('key', key);
  optionalFunction('fingerprint', fingerprint);
  optionalFunction('keep', keep);
  const wait = wholeNumber('waitMs', waitMs, 0);
  const resolvedScope = scope ?? fn.name;
  if (resolvedScope === '') {
    throw new InvalidOptionsError(
      'idempotent: pass a scope (an anonymous function has no name to scope its keys by)',
    );
  }
  const engine = new Engine({ ...engineOptions, store: store ?? sharedMemoryStore() });
  const label = `fn:${resolvedScope}`;

  const execute = async (input: I): Promise<Execution<R>> => {
    const storageKey = scopedKey(label, validateKey(key(input)));
    const result = await engine.execute<R>({
      key: storageKey,
      scope: label,
      fingerprint: fingerprintOf([canonicalJson(fingerprint ? fingerprint(input) : input)]),
      waitMs: wait,
      run: async (context) => fn(input, context),
      settle: (value) =>
        keep === undefined || keep(value)
          ? { keep: true, outcome: { status: 0, headers: [], body: codec.encode(value) } }
          : { keep: false },
    });
    if (result.kind === 'executed') return { value: result.result, replayed: false };
    if (!result.outcome.retained) throw new ResponseNotRetainedError(undefined);
    return { value: codec.decode(result.outcome.outcome.body) as R, replayed: true };
  };

  const wrapped = async (input: I): Promise<R> => (await execute(input)).value;
  return Object.assign(wrapped, { execute, engine });
}
