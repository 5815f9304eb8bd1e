// The effect ledger: PostgreSQL tables of one schema per store run, outside the system under test (the app
// servers write them on a direct connection that no fault touches). Append-only, no uniqueness anywhere, so a
// duplicate effect is a second row the checker counts, never a constraint violation that hides it.
//
// - executions: one row per run of the handler, written before it answers (key, token, process, time). On a
//   plain store this row IS the effect.
// - payments: transactional mode's business table, written through the claim's transaction: a committed row is
//   the effect, a rolled-back attempt leaves none. (On PostgreSQL runs the store's own table lives in this schema
//   too, as an app's would.) On MariaDB (`mysql-tx`) the claim's transaction is MariaDB's, so the payments table
//   is there, beside the store's (`<schema>_payments` in the same database), and the ledger reads it there.
// - events: the engine's claim events (acquired, takeover, completed, released, fenced, leaseLost) by token.
import type mysql from 'mysql2/promise';
import pg from 'pg';
import { migrate } from '../src/stores/postgres/index.js';
import { directPool, mysqlTables } from './mysql.js';

export interface ExecutionRow {
  readonly key: string;
  readonly id: string | null;
  readonly token: number | null;
  readonly attempt: number | null;
  readonly takeover: boolean | null;
  readonly pid: number;
  readonly server: string;
  readonly adapter: string;
  readonly route: string;
  readonly at: number;
}

export interface PaymentRow {
  readonly key: string;
  readonly id: string;
  readonly token: number;
  readonly pid: number;
  readonly server: string;
  readonly at: number;
  /**
   * The backend that wrote it (MariaDB: its `CONNECTION_ID()`) and its transaction's start (ms; MariaDB: none):
   * two rows with both equal committed together.
   */
  readonly backend: number | null;
  readonly txStartedAt: number | null;
}

export interface EventRow {
  readonly id: string;
  readonly token: number | null;
  readonly type: string;
  readonly detail: string;
  readonly pid: number;
  readonly server: string;
  readonly at: number;
}

export interface Ledger {
  readonly url: string;
  readonly schema: string;
  readonly applicationName: string;
  readonly pool: pg.Pool;
  read(): Promise<{ executions: ExecutionRow[]; payments: PaymentRow[]; events: EventRow[] }>;
  drop(): Promise<void>;
  /** Closes the ledger's connections and keeps its tables (`--keep`). */
  end(): Promise<void>;
}

export interface LedgerOptions {
  /** PostgreSQL stores: the store's table in the ledger's schema, as an app's would be. */
  readonly postgresStoreTable: boolean;
  /** MariaDB transactional mode: the payments table in this database (`mysql://…`, direct), not in PostgreSQL. */
  readonly mysqlPayments?: string | undefined;
}

export async function createLedger(url: string, schema: string, options: LedgerOptions): Promise<Ledger> {
  const applicationName = `${schema}-checker`;
  const pool = new pg.Pool({ connectionString: url, application_name: applicationName, max: 4 });
  pool.on('error', () => {});
  const onMySql = options.mysqlPayments === undefined ? undefined : directPool(options.mysqlPayments);
  const mysqlPayments = mysqlTables(schema).payments;
  if (onMySql !== undefined)
    await onMySql.query(`
      CREATE TABLE \`${mysqlPayments}\` (
        serial BIGINT AUTO_INCREMENT PRIMARY KEY, \`key\` VARCHAR(100) NOT NULL, id VARCHAR(100) NOT NULL,
        token BIGINT NOT NULL, pid INT NOT NULL, server VARCHAR(20) NOT NULL, at_ms BIGINT NOT NULL, backend BIGINT,
        tx_started_ms BIGINT) ENGINE = InnoDB`);
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await pool.query(`
    CREATE TABLE "${schema}".executions (
      serial bigserial, key text NOT NULL, id text, token bigint, attempt integer, takeover boolean,
      pid integer NOT NULL, server text NOT NULL, adapter text NOT NULL, route text NOT NULL, at_ms bigint NOT NULL);
    CREATE TABLE "${schema}".payments (
      serial bigserial, key text NOT NULL, id text NOT NULL, token bigint NOT NULL, pid integer NOT NULL,
      server text NOT NULL, at_ms bigint NOT NULL, backend integer, tx_started_ms bigint);
    CREATE TABLE "${schema}".events (
      serial bigserial, id text NOT NULL, token bigint, type text NOT NULL, detail text NOT NULL,
      at_ms bigint NOT NULL, pid integer NOT NULL, server text NOT NULL);
  `);
  if (options.postgresStoreTable) await migrate(pool, { schema });
  return {
    url,
    schema,
    applicationName,
    pool,
    async read() {
      const executions = (
        await pool.query(
          `SELECT key, id, token::float8 AS token, attempt, takeover, pid, server, adapter, route, at_ms::float8 AS at
           FROM "${schema}".executions ORDER BY serial`,
        )
      ).rows as ExecutionRow[];
      const payments =
        onMySql === undefined
          ? ((
              await pool.query(
                `SELECT key, id, token::float8 AS token, pid, server, at_ms::float8 AS at, backend, tx_started_ms::float8 AS "txStartedAt"
                 FROM "${schema}".payments ORDER BY serial`,
              )
            ).rows as PaymentRow[])
          : await readMySqlPayments(onMySql, mysqlPayments);
      const events = (
        await pool.query(
          `SELECT id, token::float8 AS token, type, detail, pid, server, at_ms::float8 AS at FROM "${schema}".events ORDER BY serial`,
        )
      ).rows as EventRow[];
      return { executions, payments, events };
    },
    async drop() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
      if (onMySql !== undefined) {
        await onMySql.query(`DROP TABLE IF EXISTS \`${mysqlPayments}\``);
        await onMySql.end();
      }
    },
    async end() {
      await pool.end();
      await onMySql?.end();
    },
  };
}

async function readMySqlPayments(pool: mysql.Pool, table: string): Promise<PaymentRow[]> {
  const [rows] = await pool.query<mysql.RowDataPacket[]>(
    `SELECT \`key\`, id, CAST(token AS DOUBLE) AS token, pid, server, CAST(at_ms AS DOUBLE) AS at,
            CAST(backend AS DOUBLE) AS backend, CAST(tx_started_ms AS DOUBLE) AS txStartedAt
     FROM \`${table}\` ORDER BY serial`,
  );
  return rows as PaymentRow[];
}
