import type { Store } from '../../src/index.js';

/**
 * `inner` (a real MemoryStore) seen through the Store contract, with the methods in `changes` in place of its own:
 * a store that answers late, fails once, or adds `beginTransaction`, without repeating the other five methods.
 */
export function over(inner: Store, name: string, changes: Partial<Store>): Store {
  return {
    name,
    begin: (input) => inner.begin(input),
    complete: (input) => inner.complete(input),
    release: (input) => inner.release(input),
    renew: (input) => inner.renew(input),
    get: (key) => inner.get(key),
    delete: (key) => inner.delete(key),
    ...changes,
  };
}

type Method = 'begin' | 'complete' | 'release' | 'renew' | 'get' | 'delete';

/**
 * A real MemoryStore behind a switch that makes chosen operations fail or hang, for fault injection in engine
 * tests (the store itself is never replaced by a fake).
 */
export function faulty(
  store: Store,
): Store & { fail: Set<Method>; hang: Set<Method>; loseReply: Set<Method>; calls: Record<string, number> } {
  const fail = new Set<Method>();
  const hang = new Set<Method>();
  // The operation reaches the store and takes effect, but its reply is lost on the way back.
  const loseReply = new Set<Method>();
  const calls: Record<string, number> = {};
  const wrap =
    <A extends unknown[], R>(name: Method, fn: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      calls[name] = (calls[name] ?? 0) + 1;
      if (hang.has(name)) return new Promise<R>(() => {});
      if (fail.has(name)) return Promise.reject(new Error(`injected ${name} failure`));
      if (loseReply.has(name)) {
        loseReply.delete(name);
        return fn(...args).then(() => Promise.reject(new Error(`injected lost ${name} reply`)));
      }
      return fn(...args);
    };
  return {
    name: store.name,
    fail,
    hang,
    loseReply,
    calls,
    begin: wrap('begin', store.begin.bind(store)),
    complete: wrap('complete', store.complete.bind(store)),
    release: wrap('release', store.release.bind(store)),
    renew: wrap('renew', store.renew.bind(store)),
    get: wrap('get', store.get.bind(store)),
    delete: wrap('delete', store.delete.bind(store)),
  };
}
