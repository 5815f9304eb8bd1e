/**
 * @module `oncely/decorators`: `@idempotent` for class methods (TypeScript's standard decorators), with the key and
 * fingerprint taken from the arguments, and `currentClaim()` for the running call's claim.
 */
// This file's declarations use Node's types (node:async_hooks): the directive, kept in its .d.ts, loads @types/node
// for users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ExecutionContext } from './core/claim.js';
import { ENGINE_OPTION_NAMES } from './core/engine-options.js';
import { InvalidOptionsError } from './core/errors.js';
import type { Store } from './core/store.js';
import { knownOptions, requireFunction } from './core/validate.js';
import { type IdempotentFunction, type IdempotentOptions, idempotent as wrap } from './idempotent.js';

/** The options of `@idempotent`: those of `idempotent()`, with the key and fingerprint taken from the arguments. */
export interface IdempotentMethodOptions<This, Args extends readonly unknown[], R>
  extends Omit<IdempotentOptions<Call<This, Args>, R>, 'key' | 'scope' | 'fingerprint' | 'store'> {
  /**
   * Keeps this method's keys apart from every other's. Required: a method decorator cannot see its class's name, and
   * method names (`create`, `charge`) repeat across classes.
   */
  readonly scope: string;
  /** The idempotency key from the method's arguments (an order id, a message id). */
  readonly key: (...args: Args) => string;
  /** What identifies the call beyond its key, hashed as canonical JSON. Default: all the arguments. */
  readonly fingerprint?: (...args: Args) => unknown;
  /**
   * Where results are kept: a store, or a function of the instance (`(service) => service.store`) for a store that
   * exists only once the instance does (dependency injection). Default: the process's shared in-memory store.
   */
  readonly store?: Store | ((self: This) => Store);
}

/** One call of the decorated method, as the wrapped function sees it. */
interface Call<This, Args> {
  readonly self: This;
  readonly args: Args;
}

const OPTION_NAMES = [...ENGINE_OPTION_NAMES, 'key', 'scope', 'fingerprint', 'codec', 'keep', 'waitMs'];
const claims = new AsyncLocalStorage<ExecutionContext>();

/**
 * The claim of the `@idempotent` method running in this async context: its fencing token for downstream writes,
 * the signal that aborts when the claim is lost. Undefined outside one.
 */
export function currentClaim(): ExecutionContext | undefined {
  return claims.getStore();
}

/**
 * Makes an async method take effect once per key: a TypeScript 5 (standard, TC39) method decorator built on
 * `idempotent()`, which also works where `experimentalDecorators` is on (a Nest service). The first call with a key runs; later ones get the stored result (an equal value, decoded);
 * concurrent ones throw `InProgressError` (or wait, with `waitMs`); the same key with other arguments throws
 * `FingerprintMismatchError`; a thrown error is not stored. Options are checked where the decorator is written.
 *
 * @example
 * class Payments {
 *   @idempotent({ scope: 'payments.charge', key: (order: Order) => order.id })
 *   async charge(order: Order): Promise<Receipt> {
 *     return provider.charge(order, { fencingToken: currentClaim()!.token });
 *   }
 * }
 */
export function idempotent<This, Args extends unknown[], R = unknown>(
  options: IdempotentMethodOptions<This, Args, R>,
): IdempotentMethodDecorator<This, Args, R> {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionsError('@idempotent: options are required ({ scope, key })');
  knownOptions('@idempotent', options, OPTION_NAMES);
  const { store, key, fingerprint, scope, ...rest } = options;
  if (typeof scope !== 'string' || scope === '')
    throw new InvalidOptionsError(
      "@idempotent: pass a scope (a method decorator cannot see its class's name)",
    );
  requireFunction('key', key);

  type Method = (this: This, ...args: Args) => Promise<R>;
  const replace = (method: Method): Method => {
    const wrapperFor = (resolved: Store | undefined): IdempotentFunction<Call<This, Args>, R> =>
      wrap<Call<This, Args>, R>(
        // The claim is reachable through currentClaim() for as long as the method runs.
        (call, claim) => claims.run(claim, () => method.apply(call.self, call.args)),
        {
          ...rest,
          ...(resolved === undefined ? {} : { store: resolved }),
          scope,
          // Every argument is passed on; a key that names fewer ignores the rest, the default fingerprint does not.
          key: (call) => key(...call.args),
          fingerprint: (call) => (fingerprint === undefined ? call.args : fingerprint(...call.args)),
        },
      );
    // Built now, so bad engine options throw here; with a store per instance, one per store on first use.
    const fixed = wrapperFor(typeof store === 'function' ? undefined : store);
    if (typeof store !== 'function') {
      return function idempotentMethod(this: This, ...args: Args) {
        return fixed({ self: this, args });
      };
    }
    const perStore = new WeakMap<Store, IdempotentFunction<Call<This, Args>, R>>();
    return function idempotentMethod(this: This, ...args: Args) {
      const resolved = store(this);
      let wrapped = perStore.get(resolved);
      if (wrapped === undefined) {
        wrapped = wrapperFor(resolved);
        perStore.set(resolved, wrapped);
      }
      return wrapped({ self: this, args });
    };
  };

  function decorate(method: unknown, context: unknown, descriptor?: PropertyDescriptor): unknown {
    // Legacy decorators (experimentalDecorators, as Nest and other DI frameworks compile) call (prototype, name,
    // descriptor); standard ones (method, context).
    if (typeof context === 'string' || typeof context === 'symbol') {
      if (typeof descriptor?.value !== 'function')
        throw new InvalidOptionsError('@idempotent decorates methods only');
      return { ...descriptor, value: replace(descriptor.value as Method) };
    }
    if ((context as { kind?: unknown } | undefined)?.kind !== 'method' || typeof method !== 'function')
      throw new InvalidOptionsError('@idempotent decorates methods only');
    return replace(method as Method);
  }
  return decorate as IdempotentMethodDecorator<This, Args, R>;
}

/**
 * What `idempotent(options)` returns: a decorator for async methods whose arguments begin with those of `key` (it
 * may name fewer; `...never[]` accepts any further ones). One type for both decorator conventions.
 */
export interface IdempotentMethodDecorator<This, Args extends unknown[], R> {
  /** TypeScript 5 standard decorators. */
  <T extends This, M extends (this: T, ...args: [...Args, ...never[]]) => Promise<R>>(
    method: M,
    context: ClassMethodDecoratorContext<T, M>,
  ): M;
  /** Legacy decorators (`experimentalDecorators`): the method's descriptor, with the method replaced. */
  <T extends This, M extends (this: T, ...args: [...Args, ...never[]]) => Promise<R>>(
    target: T,
    name: string | symbol,
    descriptor: TypedPropertyDescriptor<M>,
  ): TypedPropertyDescriptor<M>;
}
