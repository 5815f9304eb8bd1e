/**
 * @module Where an outbox lives and what it runs queries on: the `schema` option every outbox function takes, the
 * qualified table name, the NOTIFY channel, and `Queryable`, the caller's `pg` client, pool or transaction.
 */
import type { QueryResult, QueryResultRow } from 'pg';
import { InvalidOptionsError } from '../../core/errors.js';

/**
 * Anything that runs a parameterized query: a `pg` `Client`, `PoolClient` or `Pool`. The outbox never opens
 * connections of its own; it uses the one the caller passes (inside the caller's transaction for `add`).
 */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>>;
}

/** Where the outbox lives. Every outbox function takes the same `schema` option. */
export interface SchemaOptions {
  /**
   * PostgreSQL schema holding `oncely_outbox`. Default `public`. On MySQL / MariaDB, the database holding
   * `oncely_outbox` and `oncely_outbox_keys` (MySQL's schemas are its databases); default the connection's own.
   */
  readonly schema?: string;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

/** The NOTIFY channel every outbox uses; the payload names the table, so relays ignore other schemas' hints. */
export const NOTIFY_CHANNEL = 'oncely_outbox';

export interface OutboxTable {
  readonly schema: string;
  /** Quoted, schema-qualified name to splice into SQL (validated, never user input at query time). */
  readonly name: string;
}

/** Validates the schema name once, at construction, and returns the qualified table name. */
export function outboxTable(schema: unknown = 'public'): OutboxTable {
  if (typeof schema !== 'string' || !IDENTIFIER.test(schema)) {
    throw new InvalidOptionsError(
      `schema must be a plain PostgreSQL identifier (letters, digits, _ and $, at most 63 characters), got ${String(schema)}`,
    );
  }
  return { schema, name: `"${schema}".oncely_outbox` };
}
