/**
 * @module Where the outbox lives on MySQL / MariaDB: `oncely_outbox` and its key-lock table `oncely_outbox_keys`, in
 * the pool's own database, or in the database the `schema` option names (MySQL's schemas are its databases).
 */
import { outboxTable } from '../table.js';

export interface MySqlOutboxTables {
  /** The database named by `schema`, or undefined for the connection's own. */
  readonly schema: string | undefined;
  /** The outbox table, quoted (and qualified when `schema` is given), to splice into SQL. */
  readonly table: string;
  /** The key-lock table beside it. */
  readonly keys: string;
}

/**
 * The tables of one outbox. `schema` is checked as on PostgreSQL (a plain identifier, so quoting needs no escaping);
 * left out, the tables are unqualified and live in the database the connection uses.
 */
export function mysqlOutboxTables(schema: unknown): MySqlOutboxTables {
  if (schema === undefined) return { schema, table: '`oncely_outbox`', keys: '`oncely_outbox_keys`' };
  const checked = outboxTable(schema).schema;
  return {
    schema: checked,
    table: `\`${checked}\`.\`oncely_outbox\``,
    keys: `\`${checked}\`.\`oncely_outbox_keys\``,
  };
}
