import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { PoolConnection } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Engine,
  InProgressError,
  idempotent,
  isStoreUnavailableError,
  LeaseLostError,
  TransactionEscapedError,
} from '../../src/index.js';
import { scopedKey } from '../../src/store.js';
import { connectionOf, MySqlStore } from '../../src/stores/mysql/index.js';
import { requireService } from '../support/services.js';
import { createPool, createTestTable, DRIVERS, query, type TestTable } from './support.js';

interface Payment {
  readonly id: string;
  readonly cents: number;
}

const holder = new URL('./workers/hold.ts', import.meta.url).pathname;

beforeAll(() => requireService('mariadb'));

describe.each(DRIVERS)('transactional mode on %s', (driver) => {
  let db: TestTable;
  let store: MySqlStore;
  const payments = `oncely_test_payments_${driver}_${Math.random().toString(36).slice(2, 8)}`;

  beforeAll(async () => {
    db = await createTestTable('tx', driver, { size: 6 });
    store = new MySqlStore({ pool: db.pool, table: db.table });
    await query(db.pool, `CREATE TABLE ${payments} (id VARCHAR(64) NOT NULL, cents INT NOT NULL)`);
  });
  afterAll(async () => {
    await query(db.pool, `DROP TABLE IF EXISTS ${payments}`);
    await db?.drop();
  });

  const rowsFor = async (id: string) =>
    Number((await query(db.pool, `SELECT COUNT(*) AS n FROM ${payments} WHERE id = ?`, [id]))[0]?.n);
  const recordFor = (scope: string, id: string) => store.get(scopedKey(`fn:${scope}`, id));
  // Both drivers' connections take (sql, values): the mysql2 type stands for both here.
  const insert = (context: { readonly transaction?: unknown }, payment: Payment) =>
    connectionOf<PoolConnection>(context).query(`INSERT INTO ${payments} (id, cents) VALUES (?, ?)`, [
      payment.id,
      payment.cents,
    ]);

  function payHandler(
    scope: string,
    hooks: { inside?: () => Promise<void>; fail?: boolean; waitMs?: number } = {},
  ) {
    let runs = 0;
    const pay = idempotent(
      async (payment: Payment, context) => {
        runs += 1;
        await insert(context, payment);
        await hooks.inside?.();
        if (hooks.fail) throw new Error('card declined after the insert');
        return { paid: payment.cents };
      },
      { store: store.transactional(), scope, key: (payment) => payment.id, waitMs: hooks.waitMs ?? 0 },
    );
    return { pay, runs: () => runs };
  }

  function gate() {
    let open!: () => void;
    let entered!: () => void;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const hold = async () => {
      entered();
      await opened;
    };
    return { open, inside, hold };
  }

  it('commits the business row and the key record together; a retry replays without running', async () => {
    const { pay, runs } = payHandler('commit');
    const first = await pay.execute({ id: 'p1', cents: 500 });
    expect(first).toEqual({ value: { paid: 500 }, replayed: false });
    expect(await rowsFor('p1')).toBe(1);
    expect((await recordFor('commit', 'p1'))?.state).toBe('completed');
    expect(await pay.execute({ id: 'p1', cents: 500 })).toEqual({ value: { paid: 500 }, replayed: true });
    expect(runs()).toBe(1);
  });

  it('a handler that throws rolls back both: no key, no row; a retry runs exactly once', async () => {
    const failing = payHandler('throws', { fail: true });
    await expect(failing.pay({ id: 'p2', cents: 1 })).rejects.toThrow('card declined');
    expect(await rowsFor('p2')).toBe(0);
    expect(await recordFor('throws', 'p2')).toBeUndefined();
    const { pay, runs } = payHandler('throws');
    expect((await pay.execute({ id: 'p2', cents: 1 })).replayed).toBe(false);
    expect((await pay.execute({ id: 'p2', cents: 1 })).replayed).toBe(true);
    expect(runs()).toBe(1);
    expect(await rowsFor('p2')).toBe(1);
  });

  it('a concurrent duplicate waits for the open transaction and replays its outcome', async () => {
    const held = gate();
    const { pay, runs } = payHandler('wait', { inside: held.hold });
    const first = pay.execute({ id: 'p3', cents: 7 });
    await held.inside;
    const duplicate = payHandler('wait', { waitMs: 10_000 }).pay.execute({ id: 'p3', cents: 7 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    held.open();
    const [a, b] = await Promise.all([first, duplicate]);
    expect(a.replayed).toBe(false);
    expect(b).toEqual({ value: a.value, replayed: true });
    expect(runs()).toBe(1);
    expect(await rowsFor('p3')).toBe(1);
  });

  it('without waitMs a duplicate of an open transaction gets InProgressError after the least lock wait (1 s)', async () => {
    const held = gate();
    const { pay } = payHandler('nowait', { inside: held.hold });
    const first = pay({ id: 'p4', cents: 1 });
    await held.inside;
    const started = Date.now();
    const error = await pay({ id: 'p4', cents: 1 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InProgressError);
    expect(Date.now() - started).toBeLessThan(3_000);
    held.open();
    await first;
    expect(await rowsFor('p4')).toBe(1);
  });

  it('rolls back at the lease end: the signal aborts, later writes through the handle fail, nothing commits', async () => {
    const engine = new Engine({ store: store.transactional(), leaseMs: 400 });
    const id = `expire-${Math.random()}`;
    const begun = await engine.begin({ key: id, fingerprint: 'f' });
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    const { claim } = begun;
    await insert(claim, { id, cents: 1 });
    await new Promise((resolve) => claim.signal.addEventListener('abort', resolve));
    expect(claim.signal.reason).toBeInstanceOf(LeaseLostError);
    // The handler may still hold the handle: a write through it must fail, never autocommit outside the claim.
    await expect(insert(claim, { id, cents: 2 })).rejects.toThrow();
    await expect(
      claim.complete({ status: 201, headers: [], body: Buffer.from('late') }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(await rowsFor(id)).toBe(0);
    const retry = await engine.begin({ key: id, fingerprint: 'f' });
    expect(retry.kind).toBe('acquired');
    if (retry.kind === 'acquired') await retry.claim.release();
  });

  it('a COMMIT the handler sends, then a throw: the rollback finds the escape and the key keeps the failure', async () => {
    let runs = 0;
    const pay = idempotent(
      async (payment: Payment, context) => {
        runs += 1;
        await insert(context, payment);
        await connectionOf<PoolConnection>(context).query('COMMIT');
        throw new Error('failed after committing');
      },
      { store: store.transactional(), scope: 'escape-throw', key: (payment) => payment.id },
    );
    await expect(pay({ id: 'et-1', cents: 1 })).rejects.toBeInstanceOf(TransactionEscapedError);
    expect(await rowsFor('et-1')).toBe(1);
    // Kept as that failure: a retry is told so, and never runs the effect again after the lease.
    await expect(pay({ id: 'et-1', cents: 1 })).rejects.toBeInstanceOf(TransactionEscapedError);
    expect(runs).toBe(1);
  });

  it('a COMMIT the handler sends, then success: stored by the store’s own statements, one effect (not refused)', async () => {
    let runs = 0;
    const pay = idempotent(
      async (payment: Payment, context) => {
        runs += 1;
        await insert(context, payment);
        await connectionOf<PoolConnection>(context).query('COMMIT');
        return { paid: payment.cents };
      },
      { store: store.transactional(), scope: 'escape-ok', key: (payment) => payment.id },
    );
    expect(await pay.execute({ id: 'eo-1', cents: 1 })).toEqual({ value: { paid: 1 }, replayed: false });
    expect(await pay.execute({ id: 'eo-1', cents: 1 })).toEqual({ value: { paid: 1 }, replayed: true });
    expect(runs).toBe(1);
    expect(await rowsFor('eo-1')).toBe(1);
  });

  it('a plain begin on a key an open transaction holds is told in progress once its lock wait runs out', async () => {
    const engine = new Engine({ store: store.transactional() });
    const key = `held-${Math.random()}`;
    const begun = await engine.begin({ key, fingerprint: 'f' });
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    const impatient = createPool(driver, { size: 1, lockWaitS: 1 });
    try {
      const plain = new MySqlStore({ pool: impatient, table: db.table });
      // The uncommitted row is invisible to the plain read, so the claim's INSERT waits on it, then gives up.
      const result = await plain.begin({ key, fingerprint: 'f', leaseMs: 10_000, retentionMs: 60_000 });
      expect(result).toEqual({ kind: 'inProgress', retryAfterMs: 1_000, attempt: 1 });
    } finally {
      await begun.claim.release();
      await impatient.end();
    }
  });

  it('a store failure at the claim is a StoreUnavailableError naming the missing table', async () => {
    const broken = new MySqlStore({ pool: db.pool, table: 'oncely_no_such_table' });
    const pay = idempotent(async () => 1, {
      store: broken.transactional(),
      scope: 'missing',
      key: () => 'k',
    });
    const error = await pay(undefined).catch((caught: unknown) => caught);
    expect(isStoreUnavailableError(error)).toBe(true);
    expect((error as Error).message).toMatch(/oncely_no_such_table.*migrate/);
  });

  it('a process killed mid-transaction leaves neither key nor row; a retry executes exactly once', async () => {
    const id = `killed-${Math.random().toString(36).slice(2)}`;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', holder, JSON.stringify({ driver, table: db.table, payments, id })],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    expect((await lines.next()).value).toBe('holding');
    // Uncommitted: invisible to everyone else while the process lives.
    expect(await rowsFor(id)).toBe(0);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const { pay, runs } = payHandler('killed', { waitMs: 10_000 });
    // The server rolls back as soon as it sees the socket close; until then the retry waits on the row lock.
    expect(await pay.execute({ id, cents: 3 })).toEqual({ value: { paid: 3 }, replayed: false });
    expect((await pay.execute({ id, cents: 3 })).replayed).toBe(true);
    expect(runs()).toBe(1);
    expect(await rowsFor(id)).toBe(1);
  });
});
