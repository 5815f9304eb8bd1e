// The messaging run's schema, one per broker run, on the machine's PostgreSQL:
//
// - oncely_outbox and the inbox's records (oncely_keys): the system under test;
// - accounts: the producer's business rows, one per key, whose version rises with each committed event of the
//   key; written in the event's transaction while the key is held, so a key's versions are its commit order;
// - produced: one row per committed event (uuid, key, version), written in the same transaction as the outbox
//   row, so it exists exactly when the event committed: the list of what must arrive;
// - effects: the consumer's effect, one row per applied event, written through the inbox's transaction (a
//   committed row is the effect). Append-only, no uniqueness anywhere: a duplicate is a second row the checker
//   counts, never a constraint violation that hides it.
import pg from 'pg';
import { migrate as migrateOutbox } from '../../src/messaging/outbox/index.js';
import { migrate as migrateInbox } from '../../src/stores/postgres/index.js';

export interface ProducedRow {
  readonly uuid: string;
  readonly key: string;
  readonly version: number;
  /** When the producer wrote it (before its commit). */
  readonly at: number;
}

export interface EffectRow {
  readonly serial: number;
  readonly uuid: string;
  readonly messageId: string;
  readonly key: string;
  readonly version: number;
  readonly pid: number;
  readonly attempt: number;
  readonly at: number;
}

export interface MessagingLedger {
  readonly pool: pg.Pool;
  /** Committed events and distinct events applied so far (for progress and the end of the run). */
  progress(): Promise<{ produced: number; applied: number }>;
  outbox(): Promise<{ pending: number; dead: number }>;
  read(): Promise<{ produced: ProducedRow[]; effects: EffectRow[] }>;
  drop(): Promise<void>;
}

export async function createMessagingLedger(url: string, schema: string): Promise<MessagingLedger> {
  const pool = new pg.Pool({ connectionString: url, application_name: `${schema}-checker`, max: 2 });
  pool.on('error', () => {});
  const s = `"${schema}"`;
  await pool.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
  await pool.query(`
    CREATE TABLE ${s}.accounts (key text PRIMARY KEY, version integer NOT NULL);
    CREATE TABLE ${s}.produced (uuid text NOT NULL, key text NOT NULL, version integer NOT NULL, at_ms bigint NOT NULL);
    CREATE TABLE ${s}.effects (
      serial bigserial, uuid text NOT NULL, message_id text NOT NULL, key text NOT NULL, version integer NOT NULL,
      pid integer NOT NULL, token bigint, attempt integer, at_ms bigint NOT NULL);
    CREATE INDEX ON ${s}.effects (key, version);
  `);
  await migrateOutbox(pool, { schema });
  await migrateInbox(pool, { schema });
  return {
    pool,
    async progress() {
      const { rows } = await pool.query(
        `SELECT (SELECT count(*) FROM ${s}.produced)::int AS produced,
                (SELECT count(DISTINCT uuid) FROM ${s}.effects)::int AS applied`,
      );
      return rows[0] as { produced: number; applied: number };
    },
    async outbox() {
      const { rows } = await pool.query(
        `SELECT count(*) FILTER (WHERE state = 0)::int AS pending, count(*) FILTER (WHERE state = 2)::int AS dead
         FROM ${s}.oncely_outbox`,
      );
      return rows[0] as { pending: number; dead: number };
    },
    async read() {
      const produced = (await pool.query(`SELECT uuid, key, version, at_ms::float8 AS at FROM ${s}.produced`))
        .rows as ProducedRow[];
      const effects = (
        await pool.query(
          `SELECT serial::float8 AS serial, uuid, message_id AS "messageId", key, version, pid, attempt,
                  at_ms::float8 AS at
           FROM ${s}.effects ORDER BY serial`,
        )
      ).rows as EffectRow[];
      return { produced, effects };
    },
    async drop() {
      await pool.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
      await pool.end();
    },
  };
}
