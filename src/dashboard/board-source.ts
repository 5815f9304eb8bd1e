/**
 * @module What the dashboard reads its records from: the store and its inspector (the keys, parked, lookup and
 * actions), plus, for a Redis or PostgreSQL source, where the event log and the default outbox are. Any store
 * with an inspector fits (`{ store }`): the dashboard needs nothing of its record format.
 */
import { InvalidOptionsError } from '../core/errors.js';
import type { StoreInspector } from '../core/inspection.js';
import type { Store } from '../core/store.js';
import { knownOptions } from '../core/validate.js';
import { type DashboardSource, type ResolvedSource, resolveSource } from './source.js';

/** Any store with an inspector (MemoryStore, RedisStore, PostgresStore, a third-party one). */
export interface DashboardStoreSource {
  readonly store: Store;
}

export interface BoardSource {
  /** The store's name (`redis`, `postgres`, `memory`, …). */
  readonly kind: string;
  /** Shown in the page's header: which store, and where. */
  readonly label: string;
  readonly store: Store;
  readonly inspector: StoreInspector;
  /** Where the event log is; none for a bare store (the events panel then says how to add one). */
  readonly events: ResolvedSource | undefined;
}

/** Checks the dashboard's source once, at construction. */
export function resolveBoardSource(
  what: string,
  source: DashboardSource | DashboardStoreSource,
): BoardSource {
  if (source === null || typeof source !== 'object')
    throw new InvalidOptionsError(
      `${what}: source must be { redis: client }, { postgres: pool } or { store }`,
    );
  if ('store' in source) {
    knownOptions(`${what} source`, source, ['store']);
    const { store } = source;
    const inspector = store?.inspector;
    if (inspector === undefined)
      throw new InvalidOptionsError(
        `${what}: source.store must be a store with an inspector (Store.inspector)`,
      );
    return { kind: store.name, label: store.name, store, inspector, events: undefined };
  }
  const events = resolveSource(what, source);
  const { store } = events;
  const label =
    events.kind === 'redis' ? `redis, prefix ${events.prefix}` : `postgres, table ${events.table}`;
  // Our stores always have one; the check keeps the type honest.
  if (store.inspector === undefined)
    throw new InvalidOptionsError(`${what}: the ${store.name} store has no inspector`);
  return { kind: events.kind, label, store, inspector: store.inspector, events };
}
