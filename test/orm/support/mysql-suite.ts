/**
 * The transactional semantics of the ORM suite (suite.ts) on MySQL / MariaDB, run once per ORM that speaks MySQL:
 * what a user of that ORM relies on when the key's record, the handler's writes and the inbox mark commit together
 * through the ORM's own transaction. The ORM connects through a proxy that can cut a COMMIT (commit-cutter.ts).
 */
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotency } from '../../../src/http/express.js';
import {
  InvalidOptionsError,
  idempotent,
  isStoreUnavailableError,
  LeaseLostError,
  TransactionEscapedError,
} from '../../../src/index.js';
import { Inbox } from '../../../src/messaging/consumer.js';
import { scopedKey } from '../../../src/store.js';
import { socketClient } from '../../http/support/harness.js';
import { PayProcesses } from '../../postgres/workers/processes.js';
import { closing, listening } from '../../support/listen.js';
import { requireService, services } from '../../support/services.js';
import { type CommitCutter, commitCutter } from './commit-cutter.js';
import type { MySqlOrmFixture, MySqlOrmWorld } from './mysql-fixture.js';
import { freshMySqlTables, type MySqlTablesOwner } from './mysql-tables.js';

const worker = new URL('./mysql-worker.ts', import.meta.url).pathname;

export function describeOrmMySql<Handle>(fixture: MySqlOrmFixture<Handle>): void {
  describe(`${fixture.name} on MariaDB: the key, the writes and the inbox mark commit together`, () => {
    let world: MySqlOrmWorld<Handle>;
    let tables: MySqlTablesOwner;
    let cutter: CommitCutter;
    // Three child processes, started once for the storm and the SIGKILL (each start loads the ORM: seconds).
    let workers: PayProcesses | undefined;

    beforeAll(async () => {
      await requireService('mariadb');
      tables = await freshMySqlTables(fixture.name);
      const { host, port } = services.mariadb;
      cutter = await commitCutter({ host, port });
      world = await fixture.open(tables, cutter.urlFor(tables.database));
      // Through the ORM, twice: the table and its procedures are made once, and a second run changes nothing.
      await world.store.migrate();
      await world.store.migrate();
    });
    afterAll(async () => {
      await workers?.stop();
      await world?.close();
      await cutter?.close();
      await tables?.drop();
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

    it('speaks MySQL: the store says so, and has no PostgreSQL waitFor', () => {
      expect(world.store.dialect).toBe('mysql');
      expect(world.store.name).toBe('mysql');
      expect(world.store.waitFor).toBeUndefined();
    });

    it('the plain transitions run through the ORM too: begin, complete, replay byte for byte, get, delete, stats', async () => {
      const key = `plain-${Math.random().toString(36).slice(2)}`;
      const input = { key, fingerprint: 'f', leaseMs: 10_000, retentionMs: 60_000, label: 'POST /pâyments' };
      const claim = await world.store.begin(input);
      if (claim.kind !== 'acquired') throw new Error(claim.kind);
      const body = new Uint8Array(256).map((_, i) => i);
      const outcome = { status: 201, headers: [['x-q', `it's \\ "q"`]] as [string, string][], body };
      const stored = { ...outcome, encoding: 'identity', storage: 'inline' } as const;
      expect(
        await world.store.complete({ key, token: claim.token, outcome: stored, retentionMs: 60_000 }),
      ).toEqual({
        kind: 'ok',
      });
      const replay = await world.store.begin(input);
      if (replay.kind !== 'replay') throw new Error(replay.kind);
      expect(Buffer.from(replay.outcome.body).equals(Buffer.from(body))).toBe(true);
      expect(replay.outcome.headers).toEqual(outcome.headers);
      expect((await world.store.get(key))?.label).toBe('POST /pâyments');
      expect((await world.store.stats()).completed).toBeGreaterThanOrEqual(1);
      const view = await world.store.inspector.record(key, { body: true });
      expect(view?.outcome?.bodyBytes).toBe(256);
      expect(Buffer.from(view?.outcome?.body ?? []).equals(Buffer.from(body))).toBe(true);
      expect(await world.store.delete(key)).toBe(true);
      expect(await world.store.get(key)).toBeUndefined();
    });

    it('commits the record with the writes; a retry replays without running', async () => {
      const { pay, runs } = payer('commit');
      expect(await pay.execute({ id: 'c-1', cents: 100 })).toEqual({ value: { paid: 100 }, replayed: false });
      expect(await pay.execute({ id: 'c-1', cents: 100 })).toEqual({ value: { paid: 100 }, replayed: true });
      expect(runs()).toBe(1);
      expect(await tables.count('c-1')).toBe(1);
      expect((await recordOf('commit', 'c-1'))?.state).toBe('completed');
    });

    it('a throw rolls back the writes and the claim; the retry runs once', async () => {
      let fail = true;
      const { pay, runs } = payer('throw', async () => {
        if (fail) throw new Error('card declined');
      });
      await expect(pay.execute({ id: 't-1', cents: 5 })).rejects.toThrow('card declined');
      expect(await tables.count('t-1')).toBe(0);
      expect(await recordOf('throw', 't-1')).toBeUndefined();
      fail = false;
      expect((await pay.execute({ id: 't-1', cents: 5 })).replayed).toBe(false);
      expect(runs()).toBe(2);
      expect(await tables.count('t-1')).toBe(1);
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
        expect(await tables.count('h-1')).toBe(0);
        const first = await send();
        expect(first.status).toBe(201);
        const replay = await send();
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.body.equals(first.body)).toBe(true);
        expect(await tables.count('h-1')).toBe(1);
      });
    });

    it('a COMMIT that fails (its connection cut) answers 503, never the 2xx, and the retry runs once', async () => {
      const app = express();
      app.use(express.json());
      let runs = 0;
      app.post('/payments', idempotency({ store: world.store, waitMs: 5_000 }), async (req, res) => {
        runs += 1;
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
        const cuts = cutter.cuts;
        cutter.arm();
        const failed = await send();
        expect(cutter.cuts).toBe(cuts + 1);
        expect(failed.status).toBe(503);
        expect(failed.headers['content-type']).toContain('application/problem+json');
        expect(await tables.count('f-1')).toBe(0);
        const retry = await send();
        expect(retry.status).toBe(201);
        expect(await tables.count('f-1')).toBe(1);
        expect(runs).toBe(2);
      });
      // The caller learns that the COMMIT's fate is unknown (no answer came), not that the server refused it.
      const { pay, runs: payRuns } = payer('commit-cut');
      cutter.arm();
      const cut = await pay.execute({ id: 'f-2', cents: 1 }).catch((error: unknown) => error);
      expect(isStoreUnavailableError(cut)).toBe(true);
      expect((cut as Error).message).toContain('whether it committed is unknown');
      expect(await tables.count('f-2')).toBe(0);
      expect((await pay.execute({ id: 'f-2', cents: 1 })).replayed).toBe(false);
      expect(payRuns()).toBe(2);
      expect(await tables.count('f-2')).toBe(1);
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
      expect(await tables.count('j-1')).toBe(0);
      expect(await recordOf('join', 'j-1')).toBeUndefined();
      const kept = await world.userTransaction((handle) => payIn(handle).execute({ id: 'j-1' }));
      expect(kept).toEqual({ value: 'paid', replayed: false });
      expect(await tables.count('j-1')).toBe(1);
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
        await world.insertPayment(handle, 'jt-1-before', 2);
        await expect(pay(handle).execute({ id: 'jt-1' })).rejects.toThrow('declined');
        await world.insertPayment(handle, 'jt-1-after', 2);
      });
      expect(await tables.count('jt-1')).toBe(0);
      expect(await tables.count('jt-1-before')).toBe(1);
      expect(await tables.count('jt-1-after')).toBe(1);
      expect(await recordOf('join-throw', 'jt-1')).toBeUndefined();
    });

    it('transactionOf refuses a context without this ORM’s transaction; join refuses the database object', () => {
      for (const context of [undefined, {}, { transaction: { query() {} } }]) {
        expect(() => world.store.transactionOf(context)).toThrow(/no .* transaction in this context/);
      }
      expect(() => world.store.join(world.db as Handle)).toThrow(InvalidOptionsError);
    });

    it('a COMMIT sent through the ORM, then success: everything committed once and the outcome stored (documented)', async () => {
      const { pay, runs } = payer('escape', (handle) => world.rawCommit(handle));
      expect(await pay.execute({ id: 'e-1', cents: 3 })).toEqual({ value: { paid: 3 }, replayed: false });
      expect(await pay.execute({ id: 'e-1', cents: 3 })).toEqual({ value: { paid: 3 }, replayed: true });
      expect(runs()).toBe(1);
      expect(await tables.count('e-1')).toBe(1);
    });

    it('a COMMIT sent through the ORM, then a throw: the rollback finds the escape and the key keeps it', async () => {
      const { pay, runs } = payer('escape-throw', async (handle) => {
        await world.rawCommit(handle);
        throw new Error('failed after committing');
      });
      const error = await pay.execute({ id: 'et-1', cents: 3 }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TransactionEscapedError);
      expect(await tables.count('et-1')).toBe(1);
      await expect(pay.execute({ id: 'et-1', cents: 3 })).rejects.toBeInstanceOf(TransactionEscapedError);
      expect(runs()).toBe(1);
    });

    it('joined: a COMMIT sent through the ORM ends the caller’s transaction; the outcome is refused, never recorded as success', async () => {
      let inner: unknown;
      await world
        .userTransaction(async (handle) => {
          inner = await idempotent(
            async (payment: { id: string }, context) => {
              const tx = world.store.transactionOf(context);
              await world.insertPayment(tx, payment.id, 1);
              await world.rawCommit(tx);
              return 'paid';
            },
            { store: world.store.join(handle), scope: 'join-escape', key: (payment) => payment.id },
          )
            .execute({ id: 'je-1' })
            .catch((caught: unknown) => caught);
        })
        .catch(() => {});
      expect(inner).toBeInstanceOf(TransactionEscapedError);
      expect(await tables.count('je-1')).toBe(1);
      // Kept as the escape's failure: a retry is told so, and never runs the effect again.
      const again = await world
        .userTransaction((handle) =>
          idempotent(async () => 'paid', {
            store: world.store.join(handle),
            scope: 'join-escape',
            key: (payment: { id: string }) => payment.id,
          })
            .execute({ id: 'je-1' })
            .catch((caught: unknown) => caught),
        )
        .catch((caught: unknown) => caught);
      expect(again).toBeInstanceOf(TransactionEscapedError);
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
            // Past its lease: its connection was KILLed, so this write fails instead of committing anywhere.
            late = await world.insertPayment(handle, `${payment.id}-late`, 1).then(
              () => 'committed on its own',
              (error: unknown) => error,
            );
          } else await world.insertPayment(handle, payment.id, 1);
          return 'paid';
        },
        { store: world.store, scope: 'late', key: (payment) => payment.id, leaseMs: 300, waitMs: 3_000 },
      );
      const first = pay.execute({ id: 'l-1' }).catch((error: unknown) => error);
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(await pay.execute({ id: 'l-1' })).toEqual({ value: 'paid', replayed: false });
      letGo();
      expect(await first).toBeInstanceOf(LeaseLostError);
      expect(late).toBeInstanceOf(Error);
      expect(await tables.count('l-1-late')).toBe(0);
      expect(runs).toBe(2);
      expect(await tables.count('l-1')).toBe(1);
      expect(await pay.execute({ id: 'l-1' })).toEqual({ value: 'paid', replayed: true });
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
      expect(await tables.count('i-1')).toBe(0);
      fail = false;
      expect((await inbox.handle({ id: 'i-1' }, { redelivered: true })).kind).toBe('processed');
      expect((await inbox.handle({ id: 'i-1' }, { redelivered: true })).kind).toBe('duplicate');
      expect(await tables.count('i-1')).toBe(1);
    });

    async function processes(): Promise<PayProcesses> {
      if (workers !== undefined) return workers;
      workers = new PayProcesses(
        3,
        { orm: fixture.name, tables, url: cutter.urlFor(tables.database) },
        worker,
      );
      expect(await workers.read()).toEqual(['ready', 'ready', 'ready']);
      return workers;
    }
    it('a storm of 51 callers of one key across three processes: one committed effect, identical answers', async () => {
      const running = await processes();
      running.send('storm s-1 17');
      const answers = (await running.read()).flatMap((line) => JSON.parse(line) as unknown[]);
      expect(answers).toHaveLength(51);
      for (const answer of answers) expect(answer).toMatchObject({ value: { paid: 100 } });
      expect(answers.filter((answer) => (answer as { replayed: boolean }).replayed === false)).toHaveLength(
        1,
      );
      expect(await tables.count('s-1')).toBe(1);
    }, 60_000);

    it('SIGKILL mid-transaction: nothing committed, and the retry runs once', async () => {
      const running = await processes();
      running.send('hang k-1', 0);
      const [inside] = await running.read(0);
      expect(inside).toMatch(/^inside \d+$/);
      const thread = Number(inside!.split(' ')[1]);
      // The claim and the payment are in a transaction that is open on the server, invisible outside it.
      const open = await tables.query(
        'SELECT COUNT(*) AS n FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = ?',
        [thread],
      );
      expect(Number(open[0]?.n)).toBe(1);
      expect(await tables.count('k-1')).toBe(0);
      const child = running.children[0]!;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      await threadGone(tables, thread);
      expect(await tables.count('k-1')).toBe(0);
      expect(await recordOf('pay', 'k-1')).toBeUndefined();
      const { pay, runs } = payer('pay');
      expect((await pay.execute({ id: 'k-1', cents: 100 })).replayed).toBe(false);
      expect(runs()).toBe(1);
      expect(await tables.count('k-1')).toBe(1);
    }, 60_000);
  });
}

/** Waits until the server noticed the dead connection and ended its thread (rolling its transaction back). */
async function threadGone(tables: MySqlTablesOwner, thread: number): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const rows = await tables.query('SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID = ?', [
      thread,
    ]);
    if (Number(rows[0]?.n) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`thread ${thread} is still there 10 s after its client was killed`);
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
