// The effect ledger: PostgreSQL tables of one schema per store run, outside the system under test (the app
// servers write them on a direct connection that no fault touches). Append-only, no uniqueness anywhere, so a
// duplicate effect is a second row the checker counts, never a constraint violation that hides it.
//
// - executions: one row per run of the handler, written before it answers (key, token, process, time). On a
//   plain store this row IS the effect.
// - payments: transactional mode's business table, written through the claim's transaction: a committed row is
//   the effect, a rolled-back attempt leaves none. (On PostgreSQL runs the store's own table lives in this schema
//   too, as an app's would.)
// - events: the engine's claim events (acquired, takeover, completed, released, fenced, leaseLost) by token.
import pg from 'pg';
import { migrate } from '../src/stores/postgres/index.js';

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
  /** The backend that wrote it and its transaction's start (ms): two rows with both equal committed together. */
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
}

export async function createLedger(url: string, schema: string, withStoreTable: boolean): Promise<Ledger> {
  const applicationName = `${schema}-checker`;
  const pool = new pg.Pool({ connectionString: url, application_name: applicationName, max: 4 });
  pool.on('error', () => {});
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
  if (withStoreTable) await migrate(pool, { schema });
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
      const payments = (
        await pool.query(
          `SELECT key, id, token::float8 AS token, pid, server, at_ms::float8 AS at, backend, tx_started_ms::float8 AS "txStartedAt"
           FROM "${schema}".payments ORDER BY serial`,
        )
      ).rows as PaymentRow[];
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
    },
  };
}
