/**
 * @module Which database an outbox function was handed: a MySQL / MariaDB pool (`mysql2/promise` or `mariadb`,
 * recognised by shape) or a `pg` pool or client, and the `OutboxBackend` of that dialect. One outbox API; the handle
 * chooses the SQL.
 */
import type { OutboxBackend } from './backend.js';
import { mysqlBackend } from './mysql/backend.js';
import { postgresBackend } from './postgres-backend.js';
import type { Queryable } from './table.js';

/**
 * A `mysql2/promise` or `mariadb` pool, by the methods the outbox uses (no driver's types are needed to compile
 * against oncely/outbox). A pool, not a connection: the relay and the maintenance functions check connections out
 * for their short transactions and run single statements in autocommit.
 */
export interface MySqlPoolLike {
  getConnection(): Promise<unknown>;
  query(...args: never[]): Promise<unknown>;
}

/** A database handle an outbox function takes: a `pg` pool or client, or a MySQL pool. */
export type OutboxDatabase = Queryable | MySqlPoolLike;

export function isMySqlPool(value: unknown): value is MySqlPoolLike {
  if (value === null || typeof value !== 'object') return false;
  const shape = value as Record<string, unknown>;
  return typeof shape.getConnection === 'function' && typeof shape.query === 'function';
}

/** The outbox of `schema` (limited to `topics`, when given) on `db`, in `db`'s dialect. */
export function backendOf(
  db: OutboxDatabase,
  schema: string | undefined,
  topics?: readonly string[],
): OutboxBackend {
  return isMySqlPool(db) ? mysqlBackend(db, schema, topics) : postgresBackend(db, schema, topics);
}
