/**
 * The transactional semantics of pg mode (test/postgres/transactional.test.ts, test/http/transactional.test.ts),
 * run once per ORM on its fixture: what a user of that ORM relies on when the key's record, the handler's writes,
 * the outbox row and the inbox mark commit together through the ORM's own transaction.
 */
import express from 'express';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotency } from '../../../src/http/express.js';
import {
  idempotent,
  isStoreUnavailableError,
  LeaseLostError,
  TransactionEscapedError,
} from '../../../src/index.js';
import { Inbox } from '../../../src/messaging/consumer.js';
import { Outbox } from '../../../src/messaging/outbox/index.js';
import { scopedKey } from '../../../src/store.js';
import { socketClient } from '../../http/support/harness.js';
import { PayProcesses } from '../../postgres/workers/processes.js';
import { closing, listening } from '../../support/listen.js';
import { requireService, services } from '../../support/services.js';
import type { OrmFixture, OrmWorld } from './fixture.js';

const worker = new URL('./worker.ts', import.meta.url).pathname;

export function describeOrmTransactional<Handle>(fixture: OrmFixture<Handle>): void {
  describe(`${fixture.name}: the key, the writes, the outbox row and the inbox mark commit together`, () => {
    let world: OrmWorld<Handle>;
    let pool: pg.Pool;
    let payments: string;

    beforeAll(async () => {
      await requireService('postgres');
      world = await fixture.open(fixture.name.replace(/\W/g, '_'));
      pool = new pg.Pool({ connectionString: services.postgres.url, max: 4 });
      payments = `"${world.schema}".orm_payments`;
    });
    afterAll(async () => {
      await pool?.end();
      await world?.close();
    });

    const recordOf = (scope: string, id: string) => world.store.get(scopedKey(`fn:${scope}`, id));

    function payer(scope: string, inside?: (handle: Handle, id: string) => Promise<void>) {
      let runs = 0;
      const pay = idempotent(
        async (payment: { id: string; cents: number }, context) => {
          runs += 1;
          const handle = world.store.transactionOf(context);
          await world.insertPayment(handle, payment.id, payment.cents);
          await inside?.(handle, payment.id);
          return { paid: payment.cents };
        },
        { store: world.store, scope, key: (payment) => payment.id, waitMs: 5_000 },
      );
      return { pay, runs: () => runs };
    }

    it('commits the record with the writes; a retry replays without running', async () => {
      const { pay, runs } = payer('commit');
      expect(await pay.execute({ id: 'c-1', cents: 100 })).toEqual({ value: { paid: 100 }, replayed: false });
      expect(await pay.execute({ id: 'c-1', cents: 100 })).toEqual({ value: { paid: 100 }, replayed: true });
      expect(runs()).toBe(1);
      expect(await world.count('c-1')).toBe(1);
      expect((await recordOf('commit', 'c-1'))?.state).toBe('completed');
    });

    it('a throw rolls back the writes and the claim; the retry runs once', async () => {
      let fail = true;
      const { pay, runs } = payer('throw', async () => {
        if (fail) throw new Error('card declined');
      });
      await expect(pay.execute({ id: 't-1', cents: 5 })).rejects.toThrow('card declined');
      expect(await world.count('t-1')).toBe(0);
      expect(await recordOf('throw', 't-1')).toBeUndefined();
      fail = false;
      expect((await pay.execute({ id: 't-1', cents: 5 })).replayed).toBe(false);
      expect(runs()).toBe(2);
      expect(await world.count('t-1')).toBe(1);
    });

    it('over HTTP: a 5xx rolls the effect back, a 2xx commits it with the stored response, replayed byte for byte', async () => {
      const app = express();
      app.use(express.json());
      let failNext = true;
      app.post('/payments', idempotency({ store: world.store }), async (req, res) => {
        const context = res.locals.idempotency!;
        await world.insertPayment(world.store.transactionOf(context), context.key, req.body.cents);
        if (failNext) {
          failNext = false;
          res.status(502).json({ error: 'card network down' });
          return;
        }
        res.status(201).json({ charged: req.body.cents });
      });
      await withServer(app, async (request) => {
        const send = () =>
          request({
            path: '/payments',
            headers: { 'idempotency-key': 'h-1', 'content-type': 'application/json' },
            body: '{"cents":42}',
          });
        expect((await send()).status).toBe(502);
        expect(await world.count('h-1')).toBe(0);
        const first = await send();
        expect(first.status).toBe(201);
        const replay = await send();
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.body.equals(first.body)).toBe(true);
        expect(await world.count('h-1')).toBe(1);
      });
    });

    it('a commit that fails answers 503, never the 2xx, and the retry runs once', async () => {
      // A deferred constraint runs at COMMIT: the first commit of this id fails there, after the outcome was written
      // (a sequence, which no rollback undoes, counts the commits).
      await pool.query(`CREATE SEQUENCE IF NOT EXISTS "${world.schema}".orm_commits`);
      await pool.query(`CREATE SEQUENCE IF NOT EXISTS "${world.schema}".orm_commits_direct`);
      await pool.query(`
        CREATE OR REPLACE FUNCTION "${world.schema}".orm_refuse_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF (NEW.id = 'f-1' AND nextval('"${world.schema}".orm_commits') = 1)
            OR (NEW.id = 'f-2' AND nextval('"${world.schema}".orm_commits_direct') = 1) THEN
            RAISE EXCEPTION 'refused at commit' USING ERRCODE = '23514';
          END IF;
          RETURN NEW;
        END $$`);
      await pool.query(`
        DROP TRIGGER IF EXISTS orm_refuse_commit ON ${payments};
        CREATE CONSTRAINT TRIGGER orm_refuse_commit AFTER INSERT ON ${payments}
          DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "${world.schema}".orm_refuse_commit()`);
      const app = express();
      app.use(express.json());
      app.post('/payments', idempotency({ store: world.store }), async (req, res) => {
        const context = res.locals.idempotency!;
        await world.insertPayment(world.store.transactionOf(context), context.key, req.body.cents);
        res.status(201).json({ charged: req.body.cents });
      });
      await withServer(app, async (request) => {
        const send = () =>
          request({
            path: '/payments',
            headers: { 'idempotency-key': 'f-1', 'content-type': 'application/json' },
            body: '{"cents":7}',
          });
        const failed = await send();
        expect(failed.status).toBe(503);
        expect(failed.headers['content-type']).toContain('application/problem+json');
        expect(await world.count('f-1')).toBe(0);
        const retry = await send();
        expect(retry.status).toBe(201);
        expect(await world.count('f-1')).toBe(1);
      });
      // The caller learns the COMMIT was refused (known: nothing committed), not that its fate is unknown.
      const { pay, runs } = payer('commit-refused');
      const refused = await pay.execute({ id: 'f-2', cents: 1 }).catch((error: unknown) => error);
      expect(isStoreUnavailableError(refused)).toBe(true);
      expect((refused as Error).message).toContain('SQLSTATE 23514');
      expect((refused as Error).message).toContain('nothing of it committed');
      expect(await world.count('f-2')).toBe(0);
      expect((await pay.execute({ id: 'f-2', cents: 1 })).replayed).toBe(false);
      expect(runs()).toBe(2);
      expect(await world.count('f-2')).toBe(1);
    });

    it('joined: the claim and the writes ride the transaction the caller opened, and roll back with it', async () => {
      let runs = 0;
      const payIn = (handle: Handle) =>
        idempotent(
          async (payment: { id: string }, context) => {
            runs += 1;
            await world.insertPayment(world.store.transactionOf(context), payment.id, 1);
            expect(world.store.transactionOf(context)).toBe(handle);
            return 'paid';
          },
          { store: world.store.join(handle), scope: 'join', key: (payment) => payment.id },
        );
      await expect(
        world.userTransaction(async (handle) => {
          await payIn(handle).execute({ id: 'j-1' });
          throw new Error('the caller rolls back');
        }),
      ).rejects.toThrow('the caller rolls back');
      expect(await world.count('j-1')).toBe(0);
      expect(await recordOf('join', 'j-1')).toBeUndefined();
      const kept = await world.userTransaction((handle) => payIn(handle).execute({ id: 'j-1' }));
      expect(kept).toEqual({ value: 'paid', replayed: false });
      expect(await world.count('j-1')).toBe(1);
      expect((await recordOf('join', 'j-1'))?.state).toBe('completed');
      expect(runs).toBe(2);
    });

    it('joined: a handler that throws undoes only its savepoint; the caller goes on and commits the rest', async () => {
      const pay = (handle: Handle) =>
        idempotent(
          async (payment: { id: string }, context) => {
            await world.insertPayment(world.store.transactionOf(context), payment.id, 1);
            throw new Error('declined');
          },
          { store: world.store.join(handle), scope: 'join-throw', key: (payment) => payment.id },
        );
      await world.userTransaction(async (handle) => {
        await expect(pay(handle).execute({ id: 'jt-1' })).rejects.toThrow('declined');
        await world.insertPayment(handle, 'jt-1-after', 2);
      });
      expect(await world.count('jt-1')).toBe(0);
      expect(await world.count('jt-1-after')).toBe(1);
      expect(await recordOf('join-throw', 'jt-1')).toBeUndefined();
    });

    it('transactionOf refuses a context without this ORM’s transaction (none, a pg client, a plain object)', async () => {
      const client = await pool.connect();
      try {
        for (const context of [undefined, {}, { transaction: client }, { transaction: { query() {} } }]) {
          expect(() => world.store.transactionOf(context)).toThrow(/no .* transaction in this context/);
        }
      } finally {
        client.release();
      }
    });

    it('join refuses the database object, which is not inside a transaction', () => {
      expect(() => world.store.join(world.db as Handle)).toThrow(/transaction/);
    });

    it('a COMMIT sent through the ORM inside the handler is refused as an escape, never recorded as success', async () => {
      const { pay } = payer('escape', (handle) => world.rawCommit(handle));
      const error = await pay.execute({ id: 'e-1', cents: 3 }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TransactionEscapedError);
      // The escape committed the claim with the row: the key keeps the failure instead of running again.
      expect(await world.count('e-1')).toBe(1);
      await expect(pay.execute({ id: 'e-1', cents: 3 })).rejects.toBeInstanceOf(TransactionEscapedError);
      expect(await world.count('e-1')).toBe(1);
    });

    it('a COMMIT sent through the ORM, then a throw: the rollback finds the escape and says so', async () => {
      const { pay } = payer('escape-throw', async (handle) => {
        await world.rawCommit(handle);
        throw new Error('failed after committing');
      });
      const error = await pay.execute({ id: 'et-1', cents: 3 }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TransactionEscapedError);
      expect(await world.count('et-1')).toBe(1);
      await expect(pay.execute({ id: 'et-1', cents: 3 })).rejects.toBeInstanceOf(TransactionEscapedError);
    });

    it('joined: a COMMIT sent through the ORM ends the caller’s transaction too; the savepoint is gone and that is said', async () => {
      let inner: unknown;
      await world
        .userTransaction(async (handle) => {
          inner = await idempotent(
            async (payment: { id: string }, context) => {
              const tx = world.store.transactionOf(context);
              await world.insertPayment(tx, payment.id, 1);
              await world.rawCommit(tx);
              throw new Error('failed after committing');
            },
            { store: world.store.join(handle), scope: 'join-escape', key: (payment) => payment.id },
          )
            .execute({ id: 'je-1' })
            .catch((caught: unknown) => caught);
        })
        .catch(() => {});
      expect(inner).toBeInstanceOf(TransactionEscapedError);
      expect(await world.count('je-1')).toBe(1);
    });

    it('a handler that outlives its lease: the key is taken over, and nothing the first holder writes afterwards commits', async () => {
      let runs = 0;
      let late: unknown;
      let letGo!: () => void;
      const held = new Promise<void>((resolve) => {
        letGo = resolve;
      });
      const pay = idempotent(
        async (payment: { id: string }, context) => {
          runs += 1;
          const handle = world.store.transactionOf(context);
          if (runs === 1) {
            await held;
            // Past its lease: on an ended ORM transaction this write could run on the pooled connection and commit
            // on its own; the failed (fenced) transaction refuses it.
            late = await world.insertPayment(handle, `${payment.id}-late`, 1).then(
              () => 'committed on its own',
              (error: unknown) => error,
            );
          } else await world.insertPayment(handle, payment.id, 1);
          return 'paid';
        },
        { store: world.store, scope: 'late', key: (payment) => payment.id, leaseMs: 300, waitMs: 2_000 },
      );
      const first = pay.execute({ id: 'l-1' }).catch((error: unknown) => error);
      await new Promise((resolve) => setTimeout(resolve, 800));
      // The lease ended: a retry takes over and runs, while the first holder is still running.
      expect(await pay.execute({ id: 'l-1' })).toEqual({ value: 'paid', replayed: false });
      letGo();
      expect(await first).toBeInstanceOf(LeaseLostError);
      expect(late).toBeInstanceOf(Error);
      expect(await world.count('l-1-late')).toBe(0);
      expect(runs).toBe(2);
      expect(await world.count('l-1')).toBe(1);
      expect(await pay.execute({ id: 'l-1' })).toEqual({ value: 'paid', replayed: true });
    });

    it('the outbox row written through the transaction exists exactly when the business row committed', async () => {
      const outbox = new Outbox({ schema: world.schema, notify: false });
      const events = async (id: string) =>
        Number(
          (await pool.query(`SELECT count(*) FROM "${world.schema}".oncely_outbox WHERE key = $1`, [id]))
            .rows[0].count,
        );
      let fail = true;
      const { pay } = payer('outbox', async (handle, id) => {
        await outbox.add(handle as object, { topic: 'payment.created', key: id, payload: { id } });
        if (fail) throw new Error('declined after the event was written');
      });
      await expect(pay.execute({ id: 'o-1', cents: 9 })).rejects.toThrow('declined');
      expect(await events('o-1')).toBe(0);
      fail = false;
      await pay.execute({ id: 'o-1', cents: 9 });
      expect(await events('o-1')).toBe(1);
      expect(await world.count('o-1')).toBe(1);
      // Outside a transaction, an event would commit on its own: refused with a typed error.
      await expect(outbox.add(world.db, { topic: 't', payload: 1 })).rejects.toThrow(
        /not inside a transaction/,
      );
    });

    it('the inbox: the effect and the mark commit together, so a redelivery takes no second effect', async () => {
      let fail = true;
      const inbox = new Inbox(
        async (message: { id: string }, context) => {
          await world.insertPayment(world.store.transactionOf(context), message.id, 1);
          if (fail) throw new Error('crashed before the ack');
          return 'done';
        },
        { store: world.store, messageId: (message) => message.id, maxAttempts: 5 },
      );
      expect((await inbox.handle({ id: 'i-1' })).kind).toBe('failed');
      expect(await world.count('i-1')).toBe(0);
      fail = false;
      expect((await inbox.handle({ id: 'i-1' }, { redelivered: true })).kind).toBe('processed');
      expect((await inbox.handle({ id: 'i-1' }, { redelivered: true })).kind).toBe('duplicate');
      expect(await world.count('i-1')).toBe(1);
    });

    it('a storm of 51 callers of one key across three processes: one committed effect, identical answers', async () => {
      const workers = new PayProcesses(3, { orm: fixture.name, schema: world.schema }, worker);
      try {
        expect(await workers.read()).toEqual(['ready', 'ready', 'ready']);
        workers.send('storm s-1 17');
        const answers = (await workers.read()).flatMap((line) => JSON.parse(line) as unknown[]);
        expect(answers).toHaveLength(51);
        for (const answer of answers) expect(answer).toMatchObject({ value: { paid: 100 } });
        expect(answers.filter((answer) => (answer as { replayed: boolean }).replayed === false)).toHaveLength(
          1,
        );
        expect(await world.count('s-1')).toBe(1);
      } finally {
        await workers.stop();
      }
    }, 60_000);

    it('SIGKILL mid-transaction: nothing committed, and the retry runs once', async () => {
      const workers = new PayProcesses(1, { orm: fixture.name, schema: world.schema }, worker);
      try {
        expect(await workers.read()).toEqual(['ready']);
        workers.send('hang k-1');
        expect(await workers.read(0)).toEqual(['inside']);
        const holder = await pool.query(
          `SELECT l.pid FROM pg_locks l WHERE l.relation = $1::regclass AND l.mode = 'RowExclusiveLock'`,
          [payments],
        );
        expect(holder.rows).toHaveLength(1);
        const child = workers.children[0]!;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
        await backendGone(pool, holder.rows[0].pid);
      } finally {
        await workers.stop();
      }
      expect(await world.count('k-1')).toBe(0);
      expect(await recordOf('pay', 'k-1')).toBeUndefined();
      const { pay, runs } = payer('pay');
      expect((await pay.execute({ id: 'k-1', cents: 100 })).replayed).toBe(false);
      expect(runs()).toBe(1);
      expect(await world.count('k-1')).toBe(1);
    }, 60_000);
  });
}

/** Waits until PostgreSQL noticed the dead connection and ended its backend (rolling its transaction back). */
async function backendGone(pool: pg.Pool, pid: number): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const { rows } = await pool.query('SELECT count(*) FROM pg_stat_activity WHERE pid = $1', [pid]);
    if (Number(rows[0].count) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`backend ${pid} is still there 10 s after its client was killed`);
}

async function withServer(
  app: express.Express,
  run: (request: ReturnType<typeof socketClient>) => Promise<void>,
): Promise<void> {
  const server = app.listen(0, '127.0.0.1');
  try {
    await run(socketClient(`http://127.0.0.1:${await listening(server)}`));
  } finally {
    await closing(server)();
  }
}
