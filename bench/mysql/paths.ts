/**
 * @module The paths the MySQL benchmark measures, the same five on each database (PostgreSQL with pg, MariaDB with
 * mysql2, MariaDB with the mariadb connector): the payments handler (one INSERT of a payment row in a transaction)
 * without oncely; through the plain store (the key's record in statements of its own around the handler's
 * transaction); in transactional mode (claim, INSERT and outcome in one transaction); and a replay through each.
 * The stores are made as their pages show: `new PostgresStore({ pool, schema })`, `new MySqlStore({ pool, table })`,
 * `store.transactional()`, the handler writing through `transactionOf(context)` / `connectionOf(context)`.
 */
import type { PoolConnection as MariaDbConnection, Pool as MariaDbPool, UpsertResult } from 'mariadb';
import type { PoolConnection as MySql2Connection, Pool as MySql2Pool, ResultSetHeader } from 'mysql2/promise';
import type pg from 'pg';
import type { Store } from '../../src/core/store.js';
import { type ExecutionContext, idempotent } from '../../src/index.js';
import { connectionOf, MySqlStore } from '../../src/stores/mysql/index.js';
import { PostgresStore, transactionOf } from '../../src/stores/postgres/index.js';

/** What every path does once per call; `id` is unique per call in the whole run. */
export interface Path {
  readonly name: string;
  readonly kind: PathKind;
  readonly request: (id: string) => Promise<unknown>;
}

export type PathKind = 'raw' | 'plain' | 'transactional' | 'plain replay' | 'transactional replay';

export const KINDS: readonly PathKind[] = [
  'raw',
  'plain',
  'transactional',
  'plain replay',
  'transactional replay',
];

/** What each kind is, in the tables. */
export const KIND_NAMES: Record<PathKind, string> = {
  raw: 'without oncely: START TRANSACTION / BEGIN, INSERT, COMMIT',
  plain: 'plain store, new key',
  transactional: 'transactional mode, new key',
  'plain replay': 'plain store, replay',
  'transactional replay': 'transactional mode, replay',
};

interface Payment {
  readonly order: string;
  readonly cents: number;
}

/** The answer every path returns: the payment row's id and the amount. */
interface Paid {
  readonly payment: string;
  readonly cents: number;
}

const CENTS = 100;
// Keys stored for the replay paths, written this many at a time.
const SEEDING_IN_FLIGHT = 16;

/**
 * The five paths on one database, given its handler in its own transaction (`ownTransaction`), its handler inside
 * oncely's transaction (`inTransaction`) and its two stores. Replays cycle over `replayKeys` keys stored while
 * building.
 */
async function pathsOf(
  replayKeys: number,
  database: string,
  ownTransaction: (payment: Payment) => Promise<Paid>,
  inTransaction: (payment: Payment, context: ExecutionContext) => Promise<Paid>,
  plainStore: Store,
  transactionalStore: Store,
): Promise<Path[]> {
  const key = (payment: Payment) => payment.order;
  const plain = idempotent(ownTransaction, { store: plainStore, scope: 'pay-plain', key });
  const transactional = idempotent(inTransaction, { store: transactionalStore, scope: 'pay-tx', key });
  for (let from = 0; from < replayKeys; from += SEEDING_IN_FLIGHT) {
    const batch = Array.from({ length: Math.min(SEEDING_IN_FLIGHT, replayKeys - from) }, (_, i) => from + i);
    await Promise.all(
      batch.flatMap((i) => [
        plain({ order: `replay-${i}`, cents: CENTS }),
        transactional({ order: `replay-${i}`, cents: CENTS }),
      ]),
    );
  }
  let replays = 0;
  const replay = (fn: typeof plain) => async () => {
    const result = await fn.execute({ order: `replay-${replays++ % replayKeys}`, cents: CENTS });
    if (!result.replayed) throw new Error(`${database}: expected a replay`);
  };
  const fresh = (fn: typeof plain) => async (id: string) => {
    if ((await fn.execute({ order: id, cents: CENTS })).replayed)
      throw new Error(`${database}: ${id} replayed`);
  };
  const paths: Record<PathKind, (id: string) => Promise<unknown>> = {
    raw: (id) => ownTransaction({ order: id, cents: CENTS }),
    plain: fresh(plain),
    transactional: fresh(transactional),
    'plain replay': replay(plain),
    'transactional replay': replay(transactional),
  };
  return KINDS.map((kind) => ({ name: `${database}: ${KIND_NAMES[kind]}`, kind, request: paths[kind] }));
}

/** PostgreSQL: `INSERT … RETURNING id` on a pg Pool, as the PostgreSQL benchmark's payments handler. */
export function postgresPaths(
  replayKeys: number,
  pool: pg.Pool,
  schema: string,
  payments: string,
): Promise<Path[]> {
  const insert = `INSERT INTO ${payments} (order_id, cents) VALUES ($1, $2) RETURNING id`;
  const store = new PostgresStore({ pool, schema, listen: false });
  const ownTransaction = async (payment: Payment): Promise<Paid> => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query(insert, [payment.order, payment.cents]);
      await client.query('COMMIT');
      return { payment: String(rows[0].id), cents: payment.cents };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  };
  const inTransaction = async (payment: Payment, context: ExecutionContext): Promise<Paid> => {
    const { rows } = await transactionOf(context).query(insert, [payment.order, payment.cents]);
    return { payment: String(rows[0].id), cents: payment.cents };
  };
  return pathsOf(replayKeys, 'PostgreSQL', ownTransaction, inTransaction, store, store.transactional());
}

/** MariaDB through mysql2: an AUTO_INCREMENT id from the INSERT's OK packet (MySQL has no RETURNING). */
export function mysql2Paths(
  replayKeys: number,
  pool: MySql2Pool,
  table: string,
  payments: string,
): Promise<Path[]> {
  const insert = `INSERT INTO \`${payments}\` (order_id, cents) VALUES (?, ?)`;
  const store = new MySqlStore({ pool, table });
  const ownTransaction = async (payment: Payment): Promise<Paid> => {
    const connection = await pool.getConnection();
    try {
      await connection.beginTransaction();
      const [result] = await connection.query<ResultSetHeader>(insert, [payment.order, payment.cents]);
      await connection.commit();
      return { payment: String(result.insertId), cents: payment.cents };
    } catch (error) {
      await connection.rollback().catch(() => {});
      throw error;
    } finally {
      connection.release();
    }
  };
  const inTransaction = async (payment: Payment, context: ExecutionContext): Promise<Paid> => {
    const connection = connectionOf<MySql2Connection>(context);
    const [result] = await connection.query<ResultSetHeader>(insert, [payment.order, payment.cents]);
    return { payment: String(result.insertId), cents: payment.cents };
  };
  return pathsOf(replayKeys, 'MariaDB, mysql2', ownTransaction, inTransaction, store, store.transactional());
}

/** MariaDB through the mariadb connector: the same statements. */
export function mariadbPaths(
  replayKeys: number,
  pool: MariaDbPool,
  table: string,
  payments: string,
): Promise<Path[]> {
  const insert = `INSERT INTO \`${payments}\` (order_id, cents) VALUES (?, ?)`;
  const store = new MySqlStore({ pool, table });
  const ownTransaction = async (payment: Payment): Promise<Paid> => {
    const connection = await pool.getConnection();
    try {
      await connection.beginTransaction();
      const result: UpsertResult = await connection.query(insert, [payment.order, payment.cents]);
      await connection.commit();
      return { payment: String(result.insertId), cents: payment.cents };
    } catch (error) {
      await connection.rollback().catch(() => {});
      throw error;
    } finally {
      await connection.release();
    }
  };
  const inTransaction = async (payment: Payment, context: ExecutionContext): Promise<Paid> => {
    const connection = connectionOf<MariaDbConnection>(context);
    const result: UpsertResult = await connection.query(insert, [payment.order, payment.cents]);
    return { payment: String(result.insertId), cents: payment.cents };
  };
  return pathsOf(replayKeys, 'MariaDB, mariadb', ownTransaction, inTransaction, store, store.transactional());
}
