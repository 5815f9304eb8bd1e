import { createHash } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BlobStore,
  Engine,
  FingerprintMismatchError,
  InProgressError,
  idempotent,
  isStoreUnavailableError,
  LeaseLostError,
  type OncelyEvent,
  TransactionEscapedError,
} from '../../src/index.js';
import { scopedKey } from '../../src/store.js';
import { PostgresStore, transactionOf } from '../../src/stores/postgres/index.js';
import { statementsFor, tableTarget } from '../../src/stores/postgres/sql.js';
import { requireService } from '../support/services.js';
import { createTestSchema, DATABASE_URL, type TestSchema } from './support.js';

interface Payment {
  readonly id: string;
  readonly cents: number;
}

let db: TestSchema;
let store: PostgresStore;
let payments: string;

beforeAll(async () => {
  await requireService('postgres');
  db = await createTestSchema('tx');
  store = new PostgresStore({ pool: db.pool, schema: db.schema });
  payments = db.table('payments');
  await db.pool.query(`CREATE TABLE ${payments} (id text NOT NULL, cents integer NOT NULL, pid integer)`);
});
afterAll(async () => {
  await store?.close();
  await db?.drop();
});

const rowsFor = async (id: string) =>
  Number((await db.pool.query(`SELECT count(*) FROM ${payments} WHERE id = $1`, [id])).rows[0].count);
const recordFor = (scope: string, id: string) => store.get(scopedKey(`fn:${scope}`, id));

/** A payments handler that writes its business row through the transaction oncely hands it. */
function payHandler(scope: string, hooks: { inside?: (pid: number) => Promise<void>; fail?: boolean } = {}) {
  let runs = 0;
  const pay = idempotent(
    async (payment: Payment, context) => {
      runs += 1;
      const client = transactionOf(context);
      const { rows } = await client.query('SELECT pg_backend_pid() AS pid');
      await client.query(`INSERT INTO ${payments} (id, cents, pid) VALUES ($1, $2, $3)`, [
        payment.id,
        payment.cents,
        rows[0].pid,
      ]);
      await hooks.inside?.(rows[0].pid);
      await client.query('SELECT 1');
      if (hooks.fail) throw new Error('card declined after the insert');
      return { paid: payment.cents, token: context.token };
    },
    { store: store.transactional(), scope, key: (payment) => payment.id },
  );
  return { pay, runs: () => runs };
}

describe('transactional mode', () => {
  it('commits the business row and the key record together; a retry replays without running', async () => {
    const { pay, runs } = payHandler('commit');
    const first = await pay.execute({ id: 'p1', cents: 500 });
    const second = await pay.execute({ id: 'p1', cents: 500 });
    expect(first.replayed).toBe(false);
    expect(second).toEqual({ value: first.value, replayed: true });
    expect(runs()).toBe(1);
    expect(await rowsFor('p1')).toBe(1);
    expect((await recordFor('commit', 'p1'))?.state).toBe('completed');
  });

  it('a handler that throws rolls back both: no key, no row; a retry runs exactly once', async () => {
    let fail = true;
    const { pay, runs } = payHandler('throws', {
      inside: async () => {
        if (fail) throw new Error('declined');
      },
    });
    await expect(pay({ id: 'p2', cents: 700 })).rejects.toThrow('declined');
    expect(await rowsFor('p2')).toBe(0);
    expect(await recordFor('throws', 'p2')).toBeUndefined();
    fail = false;
    await pay({ id: 'p2', cents: 700 });
    await pay({ id: 'p2', cents: 700 });
    expect(runs()).toBe(2);
    expect(await rowsFor('p2')).toBe(1);
  });

  it('a result the policy does not keep rolls the business writes back with the claim', async () => {
    let runs = 0;
    const pay = idempotent(
      async (payment: Payment, context) => {
        runs += 1;
        await transactionOf(context).query(`INSERT INTO ${payments} (id, cents) VALUES ($1, $2)`, [
          payment.id,
          payment.cents,
        ]);
        return { status: 503 };
      },
      { store: store.transactional(), scope: 'notKept', key: (p) => p.id, keep: (r) => r.status < 500 },
    );
    expect(await pay({ id: 'p3', cents: 1 })).toEqual({ status: 503 });
    expect(await rowsFor('p3')).toBe(0);
    expect(await recordFor('notKept', 'p3')).toBeUndefined();
    await pay({ id: 'p3', cents: 1 });
    expect(runs).toBe(2);
  });

  it('pg_terminate_backend mid-transaction leaves neither key nor row; a retry executes exactly once', async () => {
    let killed = false;
    const { pay, runs } = payHandler('terminated', {
      inside: async (pid) => {
        if (killed) return;
        killed = true;
        await db.pool.query('SELECT pg_terminate_backend($1)', [pid]);
      },
    });
    const error = await pay({ id: 'p4', cents: 900 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(await rowsFor('p4')).toBe(0);
    expect(await recordFor('terminated', 'p4')).toBeUndefined();
    const retried = await pay.execute({ id: 'p4', cents: 900 });
    expect(retried.replayed).toBe(false);
    expect((await pay.execute({ id: 'p4', cents: 900 })).replayed).toBe(true);
    expect(runs()).toBe(2);
    expect(await rowsFor('p4')).toBe(1);
  });

  it('a store failure at the claim is a StoreUnavailableError carrying the SQLSTATE', async () => {
    const broken = new PostgresStore({ pool: db.pool, schema: db.schema, table: 'no_such_table' });
    const pay = idempotent(async () => 1, {
      store: broken.transactional(),
      scope: 'missing',
      key: () => 'k',
    });
    const error = await pay(undefined).catch((e: unknown) => e);
    expect(isStoreUnavailableError(error)).toBe(true);
    expect((error as Error).message).toContain('42P01');
    expect(((error as Error).cause as { code: string }).code).toBe('42P01');
  });

  it('a concurrent duplicate waits for the open transaction and replays its outcome', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const { pay, runs } = payHandler('wait', {
      inside: async () => {
        entered();
        await gate;
      },
    });
    const waiting = idempotent(async () => ({ paid: -1, token: 0 }), {
      store: store.transactional(),
      scope: 'wait',
      key: (payment: Payment) => payment.id,
      waitMs: 10_000,
    });
    const first = pay.execute({ id: 'p5', cents: 1 });
    await inside;
    const duplicate = waiting.execute({ id: 'p5', cents: 1 });
    await new Promise((resolve) => setTimeout(resolve, 150));
    release();
    const [a, b] = await Promise.all([first, duplicate]);
    expect(a.replayed).toBe(false);
    expect(b).toEqual({ value: a.value, replayed: true });
    expect(runs()).toBe(1);
    expect(await rowsFor('p5')).toBe(1);
  });

  it('a duplicate waiting on the row lock longer than storeTimeoutMs is load, not an outage: it replays', async () => {
    const engine = new Engine({ store: store.transactional(), storeTimeoutMs: 50 });
    const key = `slow-holder-${Math.random()}`;
    const held = await engine.begin({ key, fingerprint: 'f' });
    if (held.kind !== 'acquired') throw new Error(held.kind);
    const duplicate = engine.begin({ key, fingerprint: 'f', waitMs: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await held.claim.complete({ status: 201, headers: [], body: Buffer.from('first') });
    expect(await duplicate).toMatchObject({ kind: 'replay' });
  });

  it('at serializable isolation a waiting duplicate restarts its claim and replays', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const serializable = store.transactional({ isolation: 'serializable' });
    const run = (waitMs: number, hold: boolean) =>
      idempotent(
        async (payment: Payment, context) => {
          await transactionOf(context).query(`INSERT INTO ${payments} (id, cents) VALUES ($1, $2)`, [
            payment.id,
            payment.cents,
          ]);
          if (hold) {
            entered();
            await gate;
          }
          return payment.cents;
        },
        { store: serializable, scope: 'serializable', key: (p) => p.id, waitMs },
      );
    const first = run(0, true).execute({ id: 'p10', cents: 5 });
    await inside;
    const duplicate = run(10_000, false).execute({ id: 'p10', cents: 5 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    expect(await first).toEqual({ value: 5, replayed: false });
    expect(await duplicate).toEqual({ value: 5, replayed: true });
    expect(await rowsFor('p10')).toBe(1);
  });

  it('without waitMs a duplicate of an open transaction gets InProgressError at once', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const { pay } = payHandler('nowait', {
      inside: async () => {
        entered();
        await gate;
      },
    });
    const first = pay({ id: 'p6', cents: 1 });
    await inside;
    const error = await pay({ id: 'p6', cents: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InProgressError);
    release();
    await first;
    expect(await rowsFor('p6')).toBe(1);
  });

  it('a duplicate waiting on a key a plain-mode claim holds asks again after a pause, not in a loop', async () => {
    const key = `plain-held-${Math.random()}`;
    const held = await store.begin({ key, fingerprint: 'f', leaseMs: 10_000, retentionMs: 60_000 });
    if (held.kind !== 'acquired') throw new Error(held.kind);
    const tx = store.transactional();
    let begins = 0;
    // Counts the engine's begins; everything else goes to the store as it is.
    const counting = new Proxy(tx, {
      get(target, name) {
        const value: unknown = Reflect.get(target, name, target);
        if (name === 'beginTransaction')
          return (input: Parameters<typeof tx.beginTransaction>[0]) => {
            begins += 1;
            return tx.beginTransaction(input);
          };
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const started = Date.now();
    const begun = await new Engine({ store: counting }).begin({ key, fingerprint: 'f', waitMs: 500 });
    expect(begun.kind).toBe('inProgress');
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    // The committed in-progress row holds no lock to wait on, so each begin answers at once: with the pause
    // between them (10 ms, doubling up to 250 ms) a handful, where a loop without one made hundreds.
    expect(begins).toBeGreaterThanOrEqual(2);
    expect(begins).toBeLessThanOrEqual(10);
    await store.release({ key, token: held.token });
  });

  it('the same key with other input is a FingerprintMismatchError', async () => {
    const { pay } = payHandler('mismatch');
    await pay({ id: 'p7', cents: 1 });
    await expect(pay({ id: 'p7', cents: 2 })).rejects.toBeInstanceOf(FingerprintMismatchError);
  });

  it('joins the caller’s transaction: nothing is durable until the caller commits, all is gone on rollback', async () => {
    const client = await db.pool.connect();
    try {
      const joined = store.transactional({ client });
      const pay = idempotent(
        async (payment: Payment, context) => {
          await transactionOf(context).query(`INSERT INTO ${payments} (id, cents) VALUES ($1, $2)`, [
            payment.id,
            payment.cents,
          ]);
          return payment.cents;
        },
        { store: joined, scope: 'joined', key: (p) => p.id },
      );
      await client.query('BEGIN');
      await pay({ id: 'p8', cents: 3 });
      expect(await rowsFor('p8')).toBe(0);
      await client.query('ROLLBACK');
      expect(await recordFor('joined', 'p8')).toBeUndefined();
      await client.query('BEGIN');
      await client.query(`INSERT INTO ${payments} (id, cents) VALUES ('p8-before', 0)`);
      await pay({ id: 'p8', cents: 3 });
      expect((await pay.execute({ id: 'p8', cents: 3 })).replayed).toBe(true);
      await client.query('COMMIT');
      expect(await rowsFor('p8')).toBe(1);
      expect(await rowsFor('p8-before')).toBe(1);
      expect((await recordFor('joined', 'p8'))?.state).toBe('completed');
      const outside = idempotent(async () => 1, { store: joined, scope: 'joined', key: () => 'no-begin' });
      const error = await outside(undefined).catch((e: unknown) => e);
      expect(isStoreUnavailableError(error)).toBe(true);
      expect((error as Error).message).toContain('run BEGIN on that client first');
    } finally {
      client.release();
    }
  });

  it('costs one round trip beyond the business transaction; a replay costs two', async () => {
    const counted: string[] = [];
    const connect = db.pool.connect.bind(db.pool);
    const counting = Object.create(db.pool) as typeof db.pool;
    const countingClient = async () => {
      const client = await connect();
      const query = client.query.bind(client);
      return Object.assign(Object.create(client), {
        query: (config: string | { text: string }, ...rest: unknown[]) => {
          counted.push(typeof config === 'string' ? config : config.text);
          return (query as (...args: unknown[]) => unknown)(config, ...rest);
        },
        release: client.release.bind(client),
        on: client.on.bind(client),
        off: client.off.bind(client),
      });
    };
    // Both forms of pool.connect: the store checks out with a callback (see checkout.ts).
    counting.connect = ((callback?: (error: unknown, client?: unknown) => void) => {
      const pending = countingClient();
      if (callback === undefined) return pending;
      pending.then(
        (client) => callback(undefined, client),
        (error: unknown) => callback(error),
      );
      return undefined;
    }) as typeof db.pool.connect;
    counting.query = (() => {
      throw new Error('transactional mode must not run statements outside the transaction');
    }) as never;
    const countedStore = new PostgresStore({ pool: counting, schema: db.schema, listen: false });
    const pay = idempotent(
      async (payment: Payment, context) => {
        await transactionOf(context).query(`INSERT INTO ${payments} (id, cents) VALUES ($1, $2)`, [
          payment.id,
          payment.cents,
        ]);
        return 'ok';
      },
      { store: countedStore.transactional(), scope: 'trips', key: (p) => p.id },
    );
    await pay({ id: 'p9', cents: 1 });
    // BEGIN + claim travel as one message; without oncely the same work is BEGIN, INSERT, COMMIT.
    expect(counted.map((text) => text.split(/\s+/)[0])).toEqual(['BEGIN', 'INSERT', 'WITH', 'COMMIT']);
    counted.length = 0;
    await pay({ id: 'p9', cents: 1 });
    expect(counted.map((text) => text.split(/\s+/)[0])).toEqual(['BEGIN', 'ROLLBACK']);
  });

  it('re-prepares the claim when the connection lost its prepared statement', async () => {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    try {
      const single = new PostgresStore({ pool, schema: db.schema, listen: false });
      const run = idempotent(async (n: number) => n * 2, {
        store: single.transactional(),
        scope: 'reprep',
        key: String,
      });
      expect(await run(1)).toBe(2);
      const { rows } = await pool.query(
        `SELECT name FROM pg_prepared_statements WHERE name LIKE 'oncely_s_%'`,
      );
      expect(rows).toHaveLength(1);
      await pool.query(`DEALLOCATE ${rows[0].name}`);
      expect(await run.execute(2)).toEqual({ value: 4, replayed: false });
      expect(await run.execute(2)).toEqual({ value: 4, replayed: true });
    } finally {
      await pool.end();
    }
  });

  it('emits acquired, completed and replayed events like the plain mode', async () => {
    const events: OncelyEvent['type'][] = [];
    const pay = idempotent(async (n: number) => n, {
      store: store.transactional(),
      scope: 'events',
      key: (n) => String(n),
      onEvent: (event) => events.push(event.type),
    });
    await pay(1);
    await pay(1);
    expect(events).toEqual(['acquired', 'completed', 'replayed']);
  });
});

describe('a transactional claim owns its transaction', () => {
  const insert = (claim: { transaction?: unknown }, id: string) =>
    transactionOf(claim).query(`INSERT INTO ${payments} (id, cents) VALUES ($1, 1)`, [id]);

  it('rolls the writes and the claim back when disposed unsettled; the key is free again', async () => {
    const engine = new Engine({ store: store.transactional() });
    const id = `dispose-${Date.now()}`;
    await (async () => {
      const begun = await engine.begin({ key: id, fingerprint: 'f' });
      if (begun.kind !== 'acquired') throw new Error(`expected acquired, got ${begun.kind}`);
      await using claim = begun.claim;
      await insert(claim, id);
    })();
    expect(await rowsFor(id)).toBe(0);
    const again = await engine.begin({ key: id, fingerprint: 'f' });
    expect(again.kind).toBe('acquired');
    if (again.kind === 'acquired') {
      await insert(again.claim, id);
      await again.claim.complete({ status: 201, headers: [], body: Buffer.from('ok') });
    }
    expect(await rowsFor(id)).toBe(1);
  });

  it('rolls back at the lease end when never settled: the signal aborts, later writes through the handle fail, complete is refused, nothing commits', async () => {
    const engine = new Engine({ store: store.transactional(), leaseMs: 300 });
    const id = `expire-${Date.now()}`;
    const begun = await engine.begin({ key: id, fingerprint: 'f' });
    if (begun.kind !== 'acquired') throw new Error(`expected acquired, got ${begun.kind}`);
    const { claim } = begun;
    await insert(claim, id);
    await new Promise((resolve) => claim.signal.addEventListener('abort', resolve));
    expect(Date.now()).toBeLessThanOrEqual(claim.deadline + 50);
    expect(claim.signal.reason).toBeInstanceOf(LeaseLostError);
    // The handler's code may still hold the handle: a write through it now must fail, never autocommit outside
    // the claim (or land in another request's transaction on a reused connection).
    await expect(insert(claim, id)).rejects.toThrow();
    await expect(
      claim.complete({ status: 201, headers: [], body: Buffer.from('late') }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(await rowsFor(id)).toBe(0);
    const retry = await engine.begin({ key: id, fingerprint: 'f' });
    expect(retry.kind).toBe('acquired');
    if (retry.kind === 'acquired') await retry.claim.release();
  });
});

describe('a transactional claim, settled once', () => {
  const body = { status: 201, headers: [], body: Buffer.from('ok') };
  const pidOf = async (claim: { transaction?: unknown }) =>
    (await transactionOf(claim).query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
  function recording() {
    const events: OncelyEvent[] = [];
    const operations: string[] = [];
    const engine = (options: { leaseMs?: number; blobStore?: BlobStore; maxBodyBytes?: number } = {}) =>
      new Engine({
        store: store.transactional(),
        onEvent: (event) => events.push(event),
        instrumentation: {
          engine: () => ({
            start: () => ({
              store: (operation, call) => {
                operations.push(operation);
                return call();
              },
              run: (code) => code(),
              event: () => {},
              end: () => {},
            }),
          }),
        },
        ...options,
      });
    return { events, operations, engine };
  }
  const acquire = async (engine: Engine, key: string) => {
    const begun = await engine.begin({ key, fingerprint: 'f' });
    if (begun.kind !== 'acquired') throw new Error(`expected acquired, got ${begun.kind}`);
    return begun.claim;
  };

  it('commits once: a second complete or a release is refused, disposing afterwards changes nothing', async () => {
    const { events, operations, engine } = recording();
    const claim = await acquire(engine(), `once-${Math.random()}`);
    await claim.complete(body);
    expect(claim.settled).toBe(true);
    await expect(claim.complete(body)).rejects.toMatchObject({
      name: 'ClaimSettledError',
      attempted: 'complete',
    });
    await expect(claim.release()).rejects.toMatchObject({ name: 'ClaimSettledError', attempted: 'release' });
    await claim[Symbol.asyncDispose]();
    expect(events.map((event) => event.type)).toEqual(['acquired', 'completed']);
    expect(operations).toEqual(['begin', 'commit']);
  });

  it('a release says why (notKept unless told, disposed when left unsettled) and rolls back', async () => {
    const { events, operations, engine } = recording();
    const tx = engine();
    const released = await acquire(tx, `release-${Math.random()}`);
    await released.release();
    await (async () => {
      await using _claim = await acquire(tx, `dispose-${Math.random()}`);
    })();
    expect(events.filter((event) => event.type === 'released')).toMatchObject([
      { reason: 'notKept', token: released.token },
      { reason: 'disposed' },
    ]);
    expect(operations).toEqual(['begin', 'rollback', 'begin', 'rollback']);
  });

  it('at the lease end it is settled and lost: a release then resolves quietly, and so does dispose', async () => {
    const claim = await acquire(recording().engine({ leaseMs: 100 }), `lost-${Math.random()}`);
    await new Promise((resolve) => claim.signal.addEventListener('abort', resolve));
    expect(claim.settled).toBe(true);
    await expect(claim.release()).resolves.toBeUndefined();
    await claim[Symbol.asyncDispose]();
  });

  it('reports the lease end as leaseLost, with a rollback as its last store call', async () => {
    const { events, operations, engine } = recording();
    const claim = await acquire(engine({ leaseMs: 100 }), `lost-${Math.random()}`);
    await new Promise((resolve) => claim.signal.addEventListener('abort', resolve));
    await expect.poll(() => operations).toEqual(['begin', 'rollback']);
    expect(events.map((event) => event.type)).toEqual(['acquired', 'leaseLost']);
  });

  it('a connection lost mid-claim aborts its signal; the complete that follows is a store error, reported as commit', async () => {
    const { events, engine } = recording();
    const claim = await acquire(engine(), `killed-${Math.random()}`);
    await db.pool.query('SELECT pg_terminate_backend($1)', [await pidOf(claim)]);
    await new Promise((resolve) =>
      claim.signal.aborted ? resolve(undefined) : claim.signal.addEventListener('abort', resolve),
    );
    expect(isStoreUnavailableError(claim.signal.reason)).toBe(true);
    await expect(claim.complete(body)).rejects.toSatisfy(isStoreUnavailableError);
    expect(events.find((event) => event.type === 'storeError')).toMatchObject({ operation: 'commit' });
  });

  it('an outcome the blob store refuses rolls the claim back: the key is free, the writes gone', async () => {
    const blobStore: BlobStore = {
      put: async () => Promise.reject(new Error('blob store down')),
      get: async () => undefined,
    };
    const { engine } = recording();
    const tx = engine({ blobStore, maxBodyBytes: 1 });
    const id = `blob-${Math.random()}`;
    const claim = await acquire(tx, id);
    await transactionOf(claim).query(`INSERT INTO ${payments} (id, cents) VALUES ($1, 1)`, [id]);
    await expect(claim.complete(body)).rejects.toThrow('blob store down');
    expect(await rowsFor(id)).toBe(0);
    // Released at once: a claim left open keeps its connection and transaction until its lease ends.
    const again = await tx.begin({ key: id, fingerprint: 'f' });
    expect(again.kind).toBe('acquired');
    if (again.kind === 'acquired') await again.claim.release();
  });
});

// The store's side of transactional mode, called as the Engine calls it: each way a claim's transaction ends,
// and each way its claim statement can fail or have to run again.
describe('beginTransaction, as the engine drives it', () => {
  const input = (key: string, waitMs = 0) => ({
    key,
    fingerprint: 'f',
    leaseMs: 10_000,
    retentionMs: 60_000,
    waitMs,
  });
  const outcome = {
    status: 201,
    headers: [],
    body: Buffer.from('ok'),
    encoding: 'identity',
    storage: 'inline',
  } as const;
  const acquired = async (tx: ReturnType<PostgresStore['transactional']>, key: string, waitMs = 0) => {
    const begun = await tx.beginTransaction(input(key, waitMs));
    if (begun.kind !== 'acquired') throw new Error(`expected acquired, got ${begun.kind}`);
    return begun;
  };
  const handleOf = (begun: { transaction: { handle: unknown } }) => begun.transaction.handle as pg.PoolClient;
  /** A pool of one connection whose claim scripts (`BEGIN …; claim`) `claim` may answer instead of the server. */
  function singlePool(claim?: () => Promise<never>) {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    pool.on('error', () => {});
    const scripts: string[] = [];
    if (claim !== undefined) {
      const connect = pool.connect.bind(pool);
      pool.connect = ((callback: (error: unknown, client?: pg.PoolClient) => void) => {
        connect().then((client) => {
          const query = client.query.bind(client);
          client.query = ((config: string | { text: string }, ...rest: unknown[]) => {
            const text = typeof config === 'string' ? config : config.text;
            if (!text.startsWith('BEGIN ISOLATION'))
              return (query as (...args: unknown[]) => unknown)(config, ...rest);
            scripts.push(text);
            return claim();
          }) as never;
          callback(undefined, client);
        }, callback);
      }) as never;
    }
    return { pool, scripts, idle: () => pool.totalCount === pool.idleCount };
  }
  const conflict = () =>
    Object.assign(new Error('could not serialize access due to concurrent update'), {
      severity: 'ERROR',
      code: '40001',
    });

  it('a settled transaction stays settled: a second commit is refused as lost, rollback and abort change nothing', async () => {
    const tx = store.transactional();
    const key = `settled-${Math.random()}`;
    const begun = await acquired(tx, key);
    await begun.transaction.commit(outcome, 60_000);
    await expect(begun.transaction.commit(outcome, 60_000)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(begun.transaction.rollback()).resolves.toBeUndefined();
    await expect(begun.transaction.abort()).resolves.toBeUndefined();
    expect(await store.get(key)).toMatchObject({ state: 'completed', token: begun.token });
  });

  it('every way a claim ends gives its connection back: commit, rollback, abort, a refused escape, a claim not acquired', async () => {
    const { pool, idle } = singlePool();
    const single = new PostgresStore({ pool, schema: db.schema, listen: false });
    const tx = single.transactional();
    const key = `single-${Math.random()}`;
    try {
      const committed = await acquired(tx, key);
      await committed.transaction.commit(outcome, 60_000);
      expect(idle()).toBe(true);
      expect(await tx.beginTransaction(input(key))).toMatchObject({ kind: 'replay' });
      expect(idle()).toBe(true);
      const rolledBack = await acquired(tx, `${key}-rollback`);
      await rolledBack.transaction.rollback();
      expect(idle()).toBe(true);
      const escaped = await acquired(tx, `${key}-escape`);
      await handleOf(escaped).query('COMMIT');
      await expect(escaped.transaction.commit(outcome, 60_000)).rejects.toBeInstanceOf(
        TransactionEscapedError,
      );
      expect(idle()).toBe(true);
      const escapedRollback = await acquired(tx, `${key}-escape-rollback`);
      await handleOf(escapedRollback).query('COMMIT');
      await expect(escapedRollback.transaction.rollback()).rejects.toBeInstanceOf(TransactionEscapedError);
      expect(idle()).toBe(true);
      const aborted = await acquired(tx, `${key}-abort`);
      await aborted.transaction.abort();
      expect(idle()).toBe(true);
      // And after all that, the one connection still claims.
      const last = await acquired(tx, `${key}-last`);
      await last.transaction.rollback();
    } finally {
      await pool.end();
    }
  });

  it('a joined claim leaves no listener on the caller’s client, however it ends: commit, rollback, abort', async () => {
    const client = await db.pool.connect();
    const listening = () => [client.listenerCount('error'), client.listenerCount('end')];
    try {
      await client.query('BEGIN');
      const before = listening();
      const tx = store.transactional({ client });
      const key = `joined-listeners-${Math.random()}`;
      const committed = await acquired(tx, key);
      await committed.transaction.commit(outcome, 60_000);
      expect(listening()).toEqual(before);
      const rolledBack = await acquired(tx, `${key}-rollback`);
      await rolledBack.transaction.rollback();
      expect(listening()).toEqual(before);
      // The lease end of a joined claim: its savepoint is undone, the caller's transaction and client go on.
      const aborted = await acquired(tx, `${key}-abort`);
      await aborted.transaction.abort();
      expect(listening()).toEqual(before);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
  });

  it('a statement that failed inside the transaction makes complete fail with its SQLSTATE (25P02), everything rolled back', async () => {
    const tx = store.transactional();
    const key = `aborted-${Math.random()}`;
    const begun = await acquired(tx, key);
    await handleOf(begun).query(`INSERT INTO ${payments} (id, cents) VALUES ($1, 1)`, [key]);
    await handleOf(begun)
      .query('SELECT 1 / 0')
      .catch(() => undefined);
    const error = await begun.transaction.commit(outcome, 60_000).catch((e: unknown) => e);
    expect(isStoreUnavailableError(error)).toBe(true);
    expect((error as { cause?: { code?: string } }).cause?.code).toBe('25P02');
    expect(await rowsFor(key)).toBe(0);
    expect(await store.get(key)).toBeUndefined();
  });

  it('a COMMIT the server refuses (a deferred constraint) is a store error, not a success: nothing is kept', async () => {
    const parents = db.table('parents');
    const children = db.table('children');
    await db.pool.query(`CREATE TABLE IF NOT EXISTS ${parents} (id text PRIMARY KEY)`);
    await db.pool.query(
      `CREATE TABLE IF NOT EXISTS ${children} (id text REFERENCES ${parents} (id) DEFERRABLE INITIALLY DEFERRED)`,
    );
    const tx = store.transactional();
    const key = `deferred-${Math.random()}`;
    const begun = await acquired(tx, key);
    await handleOf(begun).query(`INSERT INTO ${children} (id) VALUES ($1)`, [key]);
    const error = await begun.transaction.commit(outcome, 60_000).catch((e: unknown) => e);
    expect(isStoreUnavailableError(error)).toBe(true);
    expect((error as { cause?: { code?: string } }).cause?.code).toBe('23503');
    expect(await store.get(key)).toBeUndefined();
    expect(
      (await db.pool.query(`SELECT count(*)::int AS n FROM ${children} WHERE id = $1`, [key])).rows[0].n,
    ).toBe(0);
  });

  it('joined: at the lease end the claim’s savepoint is undone and the caller’s transaction goes on', async () => {
    const client = await db.pool.connect();
    const id = `joined-lease-${Math.random()}`;
    try {
      const engine = new Engine({ store: store.transactional({ client }), leaseMs: 100 });
      await client.query('BEGIN');
      await client.query(`INSERT INTO ${payments} (id, cents) VALUES ($1, 0)`, [`${id}-caller`]);
      const begun = await engine.begin({ key: id, fingerprint: 'f' });
      if (begun.kind !== 'acquired') throw new Error(begun.kind);
      await transactionOf(begun.claim).query(`INSERT INTO ${payments} (id, cents) VALUES ($1, 1)`, [id]);
      await new Promise((resolve) => begun.claim.signal.addEventListener('abort', resolve));
      await new Promise((resolve) => setTimeout(resolve, 100));
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    expect(await rowsFor(`${id}-caller`)).toBe(1);
    expect(await rowsFor(id)).toBe(0);
    expect(await store.get(id)).toBeUndefined();
  });

  it('the connection lost under a claim aborts its signal with the driver’s error as cause, joined or not', async () => {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      for (const tx of [store.transactional(), store.transactional({ client })]) {
        const begun = await acquired(tx, `lost-cause-${Math.random()}`);
        const { rows } = await handleOf(begun).query('SELECT pg_backend_pid() AS pid');
        await db.pool.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
        const { signal } = begun.transaction;
        await new Promise((resolve) =>
          signal.aborted ? resolve(undefined) : signal.addEventListener('abort', resolve),
        );
        expect(isStoreUnavailableError(signal.reason)).toBe(true);
        expect((signal.reason as Error).cause).toBeInstanceOf(Error);
        await begun.transaction.rollback();
      }
    } finally {
      client.release(true);
    }
  });

  it('a claim prepared already on its connection (42P05, unknown to this process) runs again and claims', async () => {
    const { pool } = singlePool();
    try {
      const { begin } = statementsFor(tableTarget(db.schema, 'oncely_keys'), { notify: true });
      const name = `oncely_s_${createHash('sha256').update(begin).digest('hex').slice(0, 32)}`;
      await pool.query(`PREPARE ${name}(text, text, bigint, bigint, bigint) AS ${begin}`);
      const run = idempotent(async (n: number) => n * 3, {
        store: new PostgresStore({ pool, schema: db.schema, listen: false }).transactional(),
        scope: `prepared-${Math.random()}`,
        key: String,
      });
      expect(await run.execute(1)).toEqual({ value: 3, replayed: false });
      expect(await run.execute(1)).toEqual({ value: 3, replayed: true });
    } finally {
      await pool.end();
    }
  });

  it('a claim that keeps losing serialization races gives up after 8 rounds: a store error carrying the 40001', async () => {
    const { pool, scripts } = singlePool(() => Promise.reject(conflict()));
    try {
      const tx = new PostgresStore({ pool, schema: db.schema, listen: false }).transactional();
      const error = await tx.beginTransaction(input(`races-${Math.random()}`)).catch((e: unknown) => e);
      expect(isStoreUnavailableError(error)).toBe(true);
      expect((error as { cause?: { code?: string } }).cause?.code).toBe('40001');
      expect(scripts).toHaveLength(8);
    } finally {
      await pool.end();
    }
  });

  it('a serialization failure of its own claim restarts it (not the caller’s: a joined claim answers in progress)', async () => {
    const serializable = store.transactional({ isolation: 'serializable', lockTimeoutMs: 5_000 });
    const key = `serial-${Math.random()}`;
    const first = await acquired(serializable, key);
    const duplicate = serializable.beginTransaction(input(key));
    await new Promise((resolve) => setTimeout(resolve, 150));
    await first.transaction.commit(outcome, 60_000);
    expect(await duplicate).toMatchObject({ kind: 'replay' });

    const client = await db.pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await client.query('SELECT 1');
      const other = `serial-joined-${Math.random()}`;
      const plain = await store.begin({ key: other, fingerprint: 'f', leaseMs: 10_000, retentionMs: 60_000 });
      if (plain.kind !== 'acquired') throw new Error(plain.kind);
      await store.complete({ key: other, token: plain.token, outcome, retentionMs: 60_000 });
      expect(await store.transactional({ client }).beginTransaction(input(other))).toMatchObject({
        kind: 'inProgress',
      });
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });

  it('a claim that meets its row changing under it runs again and reads what the change committed', async () => {
    const table = `"${db.schema}".oncely_keys`;
    for (const mode of ['plain', 'transactional'] as const) {
      const key = `stale-${mode}-${Math.random()}`;
      const first = await store.begin({ key, fingerprint: 'f', leaseMs: 10_000, retentionMs: 60_000 });
      if (first.kind !== 'acquired') throw new Error(first.kind);
      await store.release({ key, token: first.token });
      const locker = await db.pool.connect();
      try {
        // Another writer takes the released key back while the claim runs: the claim's snapshot still sees it
        // released, its UPDATE waits on the row and then finds it taken.
        await locker.query('BEGIN');
        await locker.query(
          `UPDATE ${table} SET state = 'inProgress', token = token + 1,
             lease_until_ms = (extract(epoch from clock_timestamp()) * 1000)::bigint + 60000 WHERE key = $1`,
          [key],
        );
        const claim =
          mode === 'plain'
            ? store.begin({ key, fingerprint: 'f', leaseMs: 10_000, retentionMs: 60_000 })
            : store.transactional().beginTransaction(input(key, 5_000));
        await new Promise((resolve) => setTimeout(resolve, 150));
        await locker.query('COMMIT');
        const result = await claim;
        expect(result, mode).toMatchObject({ kind: 'inProgress', attempt: 1 });
        expect((result as { retryAfterMs: number }).retryAfterMs, mode).toBeGreaterThan(30_000);
      } finally {
        locker.release();
      }
    }
  });
});
