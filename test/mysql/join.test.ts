/**
 * Transactional mode joining the caller's own transaction (`store.transactional({ connection })`): the claim, the
 * handler's writes and the outcome in a savepoint of it, on both drivers.
 */
import type { PoolConnection } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  InvalidOptionsError,
  idempotent,
  isStoreUnavailableError,
  TransactionEscapedError,
} from '../../src/index.js';
import { scopedKey } from '../../src/store.js';
import { connectionOf, type MySqlConnection, MySqlStore } from '../../src/stores/mysql/index.js';
import { requireService } from '../support/services.js';
import { createTestTable, DRIVERS, query, type TestTable } from './support.js';

beforeAll(() => requireService('mariadb'));

/** What both drivers' connections share, as these tests use them (mysql2's promise API stands for both). */
type Conn = PoolConnection;

describe.each(DRIVERS)('joining the caller’s transaction on %s', (driver) => {
  let db: TestTable;
  let store: MySqlStore;
  const payments = `oncely_test_join_payments_${driver}_${Math.random().toString(36).slice(2, 8)}`;

  beforeAll(async () => {
    db = await createTestTable('join', driver, { size: 8 });
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
  const insert = (connection: Conn, id: string, cents = 1) =>
    connection.query(`INSERT INTO ${payments} (id, cents) VALUES (?, ?)`, [id, cents]);

  /** Back to the pool with nothing left open (a failed test must not hand an open transaction on). */
  const end = async (connection: Conn) => {
    await connection.rollback().catch(() => {});
    connection.release();
  };

  /** A connection of the pool with a transaction begun on it: the caller's own. */
  async function begun(): Promise<Conn> {
    const connection = (await db.pool.getConnection()) as unknown as Conn;
    await connection.beginTransaction();
    return connection;
  }

  /** `idempotent` joined to `connection`'s transaction; the handler inserts the payment through it. */
  function payIn(
    connection: Conn,
    scope: string,
    inside?: (tx: Conn, id: string) => Promise<void>,
    counter = { runs: 0 },
  ) {
    return idempotent(
      async (payment: { id: string }, context) => {
        counter.runs += 1;
        const tx = connectionOf<Conn>(context);
        expect(tx).toBe(connection);
        await insert(tx, payment.id);
        await inside?.(tx, payment.id);
        return { paid: payment.id };
      },
      {
        store: store.transactional({ connection: connection as MySqlConnection }),
        scope,
        key: (payment) => payment.id,
        waitMs: 5_000,
      },
    );
  }

  it('the record and the writes are durable exactly when the caller commits; a retry replays', async () => {
    const counter = { runs: 0 };
    const connection = await begun();
    try {
      expect(await payIn(connection, 'commit', undefined, counter).execute({ id: 'c-1' })).toEqual({
        value: { paid: 'c-1' },
        replayed: false,
      });
      // Still the caller's, uncommitted: nothing is visible outside.
      expect(await rowsFor('c-1')).toBe(0);
      expect(await recordFor('commit', 'c-1')).toBeUndefined();
      await connection.commit();
      expect(await rowsFor('c-1')).toBe(1);
      expect((await recordFor('commit', 'c-1'))?.state).toBe('completed');
      await connection.beginTransaction();
      expect((await payIn(connection, 'commit', undefined, counter).execute({ id: 'c-1' })).replayed).toBe(
        true,
      );
      await connection.commit();
    } finally {
      await end(connection);
    }
    expect(counter.runs).toBe(1);
  });

  it('the caller rolls back after the call: no record, no effect; the retry runs once', async () => {
    const counter = { runs: 0 };
    const connection = await begun();
    try {
      await payIn(connection, 'rollback', undefined, counter).execute({ id: 'r-1' });
      await connection.rollback();
      expect(await rowsFor('r-1')).toBe(0);
      expect(await recordFor('rollback', 'r-1')).toBeUndefined();
      await connection.beginTransaction();
      expect((await payIn(connection, 'rollback', undefined, counter).execute({ id: 'r-1' })).replayed).toBe(
        false,
      );
      await connection.commit();
    } finally {
      await end(connection);
    }
    expect(counter.runs).toBe(2);
    expect(await rowsFor('r-1')).toBe(1);
  });

  it('a handler that throws undoes its own part only; the caller goes on and commits the rest', async () => {
    const connection = await begun();
    try {
      await insert(connection, 't-1-before');
      const pay = payIn(connection, 'throw', async () => {
        throw new Error('declined');
      });
      await expect(pay.execute({ id: 't-1' })).rejects.toThrow('declined');
      await insert(connection, 't-1-after');
      await connection.commit();
    } finally {
      await end(connection);
    }
    expect(await rowsFor('t-1')).toBe(0);
    expect(await rowsFor('t-1-before')).toBe(1);
    expect(await rowsFor('t-1-after')).toBe(1);
    expect(await recordFor('throw', 't-1')).toBeUndefined();
  });

  it('two claims nested in one transaction keep their own savepoints', async () => {
    const connection = await begun();
    try {
      const inner = payIn(connection, 'nested-inner', async () => {
        throw new Error('inner declined');
      });
      const outer = payIn(connection, 'nested-outer', async () => {
        await expect(inner.execute({ id: 'n-inner' })).rejects.toThrow('inner declined');
        // A second inner claim that succeeds, inside the outer one.
        await payIn(connection, 'nested-ok').execute({ id: 'n-ok' });
      });
      expect((await outer.execute({ id: 'n-outer' })).replayed).toBe(false);
      await connection.commit();
    } finally {
      await end(connection);
    }
    expect(await rowsFor('n-outer')).toBe(1);
    expect(await rowsFor('n-ok')).toBe(1);
    expect(await rowsFor('n-inner')).toBe(0);
    expect((await recordFor('nested-outer', 'n-outer'))?.state).toBe('completed');
    expect((await recordFor('nested-ok', 'n-ok'))?.state).toBe('completed');
    expect(await recordFor('nested-inner', 'n-inner')).toBeUndefined();
  });

  it('a duplicate in another transaction waits for the caller’s and replays its outcome', async () => {
    const first = await begun();
    const second = await begun();
    try {
      const counter = { runs: 0 };
      await payIn(first, 'duplicate', undefined, counter).execute({ id: 'd-1' });
      const duplicate = payIn(second, 'duplicate', undefined, counter).execute({ id: 'd-1' });
      await new Promise((resolve) => setTimeout(resolve, 200));
      await first.commit();
      expect(await duplicate).toEqual({ value: { paid: 'd-1' }, replayed: true });
      await second.commit();
      expect(counter.runs).toBe(1);
    } finally {
      await end(first);
      await end(second);
    }
    expect(await rowsFor('d-1')).toBe(1);
  });

  it('a connection with no transaction open is refused with a typed error, and nothing is written', async () => {
    const connection = (await db.pool.getConnection()) as unknown as Conn;
    try {
      const error = await payIn(connection, 'outside')
        .execute({ id: 'o-1' })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InvalidOptionsError);
      expect((error as Error).message).toMatch(/no transaction is open/);
    } finally {
      await end(connection);
    }
    expect(await rowsFor('o-1')).toBe(0);
    expect(await recordFor('outside', 'o-1')).toBeUndefined();
  });

  it('refuses a pool, and what is not a connection, at construction', () => {
    for (const connection of [db.pool, {}, null, 'conn']) {
      expect(() => store.transactional({ connection: connection as MySqlConnection })).toThrow(
        InvalidOptionsError,
      );
    }
  });

  it('a COMMIT the handler sends is refused as an escape, never recorded as success', async () => {
    const connection = await begun();
    let error: unknown;
    try {
      error = await payIn(connection, 'escape', (tx) => tx.query('COMMIT').then(() => {}))
        .execute({ id: 'e-1' })
        .catch((caught: unknown) => caught);
      await connection.rollback();
    } finally {
      await end(connection);
    }
    expect(error).toBeInstanceOf(TransactionEscapedError);
    // The escape committed the claim with the row: the key keeps the failure instead of running again.
    expect(await rowsFor('e-1')).toBe(1);
    expect((await recordFor('escape', 'e-1'))?.state).toBe('completed');
    const again = await begun();
    try {
      await expect(payIn(again, 'escape').execute({ id: 'e-1' })).rejects.toBeInstanceOf(
        TransactionEscapedError,
      );
      await again.rollback();
    } finally {
      await end(again);
    }
    expect(await rowsFor('e-1')).toBe(1);
  });

  it('a COMMIT the handler sends, then a throw: the rollback finds the escape', async () => {
    const connection = await begun();
    let error: unknown;
    try {
      error = await payIn(connection, 'escape-throw', async (tx) => {
        await tx.query('COMMIT');
        throw new Error('failed after committing');
      })
        .execute({ id: 'et-1' })
        .catch((caught: unknown) => caught);
    } finally {
      await end(connection);
    }
    expect(error).toBeInstanceOf(TransactionEscapedError);
    expect(await rowsFor('et-1')).toBe(1);
    expect((await recordFor('escape-throw', 'et-1'))?.state).toBe('completed');
  });

  it('a deadlock in the handler is its own error, not an escape: nothing commits, the key stays free', async () => {
    const locks = `${payments}_locks`;
    await query(db.pool, `CREATE TABLE ${locks} (id VARCHAR(8) PRIMARY KEY, n INT NOT NULL)`);
    await query(db.pool, `INSERT INTO ${locks} (id, n) VALUES ('a', 0), ('b', 0)`);
    const other = await begun();
    const connection = await begun();
    try {
      for (const session of [other, connection])
        await session.query('SET SESSION innodb_lock_wait_timeout = 5');
      // The other transaction weighs more (more rows changed), so InnoDB picks the joined one as the victim.
      for (let i = 0; i < 5; i++) await insert(other, `dl-weight-${i}`);
      await other.query(`UPDATE ${locks} SET n = 1 WHERE id = 'a'`);
      const pay = payIn(connection, 'deadlock', async (tx) => {
        await tx.query(`UPDATE ${locks} SET n = 2 WHERE id = 'b'`);
        const waiting = other.query(`UPDATE ${locks} SET n = 1 WHERE id = 'b'`);
        await new Promise((resolve) => setTimeout(resolve, 200));
        try {
          await tx.query(`UPDATE ${locks} SET n = 2 WHERE id = 'a'`);
        } finally {
          await waiting.catch(() => {});
        }
      });
      const error = await pay.execute({ id: 'dl-1' }).catch((caught: unknown) => caught);
      expect(error).not.toBeInstanceOf(TransactionEscapedError);
      expect((error as { errno?: number }).errno).toBe(1213);
    } finally {
      for (const session of [other, connection]) {
        // Rolled back before it goes: an open transaction would hold the table's metadata lock against the DROP.
        await session.rollback().catch(() => {});
        await session.query('SET SESSION innodb_lock_wait_timeout = DEFAULT').catch(() => {});
        session.release();
      }
      await query(db.pool, `DROP TABLE IF EXISTS ${locks}`);
    }
    expect(await rowsFor('dl-1')).toBe(0);
    expect(await recordFor('deadlock', 'dl-1')).toBeUndefined();
  });

  it('a storm of 12 callers of one key, each in a transaction of its own: one effect, the same answer', async () => {
    const counter = { runs: 0 };
    const answers = await Promise.all(
      Array.from({ length: 12 }, async () => {
        const connection = await begun();
        try {
          const answer = await payIn(connection, 'storm', undefined, counter)
            .execute({ id: 's-1' })
            .catch((error: unknown) => ({ error }));
          await connection.commit();
          return answer;
        } finally {
          await end(connection);
        }
      }),
    );
    for (const answer of answers) expect(answer).toMatchObject({ value: { paid: 's-1' } });
    expect(counter.runs).toBe(1);
    expect(await rowsFor('s-1')).toBe(1);
  });

  it('a failure of the claim itself is a StoreUnavailableError naming the table', async () => {
    const broken = new MySqlStore({ pool: db.pool, table: 'oncely_no_such_table' });
    const connection = await begun();
    try {
      const pay = idempotent(async () => 1, {
        store: broken.transactional({ connection: connection as MySqlConnection }),
        scope: 'missing',
        key: () => 'k',
      });
      const error = await pay(undefined).catch((caught: unknown) => caught);
      expect(isStoreUnavailableError(error)).toBe(true);
      expect((error as Error).message).toMatch(/oncely_no_such_table.*migrate/);
      await connection.rollback();
    } finally {
      await end(connection);
    }
  });
});
