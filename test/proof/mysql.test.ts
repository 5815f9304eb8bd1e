import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { check } from '../../proof/check.js';
import { createLedger } from '../../proof/ledger.js';
import { directPool, mysqlTables, startMySqlStore } from '../../proof/mysql.js';
import type { StoreUnderTest } from '../../proof/stores.js';
import { type ClientResult, OUTCOMES, type Outcome } from '../../proof/types.js';
import { requireService, services } from '../support/services.js';

// The proof's MariaDB phases (`mysql`, `mysql-tx`; docs/guarantees.md), the parts the phases rely on without
// showing them: in transactional mode the effect is a payment MariaDB committed, read from MariaDB and held to one
// per key; the store's restart fault reaches the app's sessions, and only those, and refuses new ones while down.
const MYSQL = services.mariadb.url;
const run = randomBytes(3).toString('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the clients saw: per key, one 2xx body naming each token. */
function clients(keys: Record<string, number[]>): ClientResult {
  const each = <T>(value: () => T) =>
    Object.fromEntries(OUTCOMES.map((outcome) => [outcome, value()])) as Record<Outcome, T>;
  return {
    index: 0,
    requests: 0,
    operations: 0,
    gaveUp: [],
    outcomes: each(() => 0),
    epoch: 0,
    timeline: each((): number[] => []),
    latency: [],
    notable: [],
    keys: Object.fromEntries(
      Object.entries(keys).map(([key, tokens]) => [
        key,
        {
          bodies: tokens.map((token) => ({
            digest: `${key}:${token}`,
            token,
            pid: 1,
            count: 1,
            replayed: 0,
            firstAt: 0,
          })),
        },
      ]),
    ),
    startedAt: 0,
    endedAt: 0,
  };
}

beforeAll(async () => {
  await requireService('postgres');
  await requireService('mariadb');
});

describe('the proof on MariaDB, transactional mode (mysql-tx)', () => {
  it('reads the payments MariaDB committed, and holds them to one per key with a 2xx naming one', async () => {
    const schema = `oncely_proof_t${run}_mysql_tx`;
    const ledger = await createLedger(services.postgres.url, schema, {
      postgresStoreTable: false,
      mysqlPayments: MYSQL,
    });
    const db = directPool(MYSQL, 1);
    try {
      const insert = (on: mysql.Pool | mysql.PoolConnection, key: string, token: number) =>
        on.query(
          `INSERT INTO \`${mysqlTables(schema).payments}\` (\`key\`, id, token, pid, server, at_ms, backend)
           VALUES (?, ?, ?, 1, 'express', 0, CONNECTION_ID())`,
          [key, `id-${key}`, token],
        );
      await insert(db, 'once', 1);
      await insert(db, 'twice', 2);
      await insert(db, 'twice', 3);
      // Rolled back: not an effect.
      const transaction = await db.getConnection();
      await transaction.beginTransaction();
      await insert(transaction, 'rolled-back', 4);
      await transaction.rollback();
      transaction.release();

      const rows = await ledger.read();
      expect(rows.payments.map((row) => [row.key, row.token])).toEqual([
        ['once', 1],
        ['twice', 2],
        ['twice', 3],
      ]);
      // 'unbacked': a client saw a 2xx for a key with no committed payment.
      const seen = { once: [1], twice: [2], unbacked: [5] };
      const result = check({
        kind: 'mysql-tx',
        ...rows,
        clients: [clients(seen)],
        final: clients(seen),
        faults: [],
        processes: [],
        crashes: [],
        leaseMs: 1_000,
        storeTimeoutMs: 1_000,
      });
      const failing = Object.fromEntries(
        result.checks.filter((entry) => entry.count > 0).map((entry) => [entry.name, entry.count]),
      );
      expect(failing).toEqual({ 'duplicate-live-effects': 1, '2xx-without-effect': 1 });
      expect(result.effects.committed).toBe(3);
    } finally {
      await db.end();
      await ledger.drop();
    }
  });
});

describe("the proof's MariaDB restart fault", () => {
  let store: StoreUnderTest;

  beforeAll(async () => {
    store = await startMySqlStore('mysql', MYSQL, `oncely_proof_t${run}_mysql`, false);
  });

  afterAll(async () => {
    await store?.close();
  });

  it("KILLs the app's sessions, spares every other session, and refuses new connections while down", async () => {
    const { url } = store.connection as { url: string };
    const app = await mysql.createConnection({ uri: url });
    app.on('error', () => {});
    const bystander = await mysql.createConnection({ uri: MYSQL });
    try {
      const restarting = store.restart(1_000);
      await sleep(200);
      await expect(mysql.createConnection({ uri: url, connectTimeout: 500 })).rejects.toThrow();
      expect(await restarting).toMatch(/: 1 session\(s\)$/);
      await expect(app.query('SELECT 1')).rejects.toThrow();
      await expect(bystander.query('SELECT 1 AS one')).resolves.toBeDefined();
      // Up again: a new connection through the proxy works.
      const again = await mysql.createConnection({ uri: url });
      await expect(again.query('SELECT 1 AS one')).resolves.toBeDefined();
      await again.end();
    } finally {
      app.destroy();
      await bystander.end();
    }
  });
});
