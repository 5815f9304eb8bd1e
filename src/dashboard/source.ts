/**
 * @module Where the dashboard and the event log read: the client the application's store uses and where in it the
 * records are (`{ redis }`, `{ postgres }`), or any store that has an inspector (`{ store }`). The caller owns the
 * connection, as with the stores: nothing here dials or closes it. Stores are built through their public entries
 * only: the records' format is theirs, and the dashboard reads it through `store.inspector`.
 */
import type { Pool } from 'pg';
import { InvalidOptionsError } from '../core/errors.js';
import { quoteIdentifier, sqlName } from '../core/sql-names.js';
import type { Store } from '../core/store.js';
import { knownOptions } from '../core/validate.js';
import { PostgresStore } from '../stores/postgres/index.js';
import { type RedisClient, RedisStore } from '../stores/redis/index.js';

/** The records (and the event log) in Redis or PostgreSQL, by the client of the application's store. */
export type DashboardSource =
  | {
      /** The ioredis client (standalone, Sentinel or Cluster) of the `RedisStore`. */
      readonly redis: RedisClient;
      /** The store's `prefix`. Default `oncely`. */
      readonly prefix?: string;
    }
  | {
      /** A `pg` Pool on the database of the `PostgresStore` (and, by default, of the outbox). */
      readonly postgres: Pool;
      /** The store's schema. Default `public`. */
      readonly schema?: string;
      /** The store's table. Default `oncely_keys`. */
      readonly table?: string;
    };

/** Where the event log lives, with the store of the records beside it. */
export type ResolvedSource =
  | {
      readonly kind: 'redis';
      readonly client: RedisClient;
      readonly prefix: string;
      /** Where the event log lives: one hash tag, so its keys share a Cluster slot (and never match records). */
      readonly eventsKey: (suffix: string) => string;
      readonly store: Store;
    }
  | {
      readonly kind: 'postgres';
      readonly pool: Pool;
      readonly schema: string;
      /** `"schema"."table"` of the records. */
      readonly table: string;
      /** `"schema".oncely_events` and `"schema".oncely_event_counts`. */
      readonly eventsTable: string;
      readonly countsTable: string;
      readonly store: Store;
    };

/** Checks a source once, at construction (bad options throw then, not per request). */
export function resolveSource(what: string, source: DashboardSource): ResolvedSource {
  if (source === null || typeof source !== 'object')
    throw new InvalidOptionsError(`${what}: source must be { redis: client } or { postgres: pool }`);
  if ('redis' in source && source.redis !== undefined) {
    knownOptions(`${what} source`, source, ['redis', 'prefix']);
    const prefix = source.prefix ?? 'oncely';
    // RedisStore validates the prefix and registers its scripts on the client (get, release, delete).
    const store = new RedisStore({ client: source.redis, prefix });
    return {
      kind: 'redis',
      client: source.redis,
      prefix,
      eventsKey: (suffix) => `${prefix}:{events}:${suffix}`,
      store,
    };
  }
  if ('postgres' in source && source.postgres !== undefined) {
    knownOptions(`${what} source`, source, ['postgres', 'schema', 'table']);
    const schema = sqlName('schema', source.schema, 'public');
    const table = sqlName('table', source.table, 'oncely_keys');
    // No LISTEN connection: the dashboard never waits for a key.
    const store = new PostgresStore({ pool: source.postgres, schema, table, listen: false, notify: true });
    const qualified = (name: string) => `${quoteIdentifier(schema)}.${quoteIdentifier(name)}`;
    return {
      kind: 'postgres',
      pool: source.postgres,
      schema,
      table: qualified(table),
      eventsTable: qualified('oncely_events'),
      countsTable: qualified('oncely_event_counts'),
      store,
    };
  }
  throw new InvalidOptionsError(`${what}: source must be { redis: client } or { postgres: pool }`);
}
