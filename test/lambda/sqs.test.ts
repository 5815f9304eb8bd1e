import type { Context, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/index.js';
import { type SqsRecordContext, sqsIdempotency } from '../../src/lambda/index.js';
import { connectionOf, MySqlStore } from '../../src/stores/mysql/index.js';
import { PostgresStore, transactionOf } from '../../src/stores/postgres/index.js';
import { createTestTable, query, type TestTable } from '../mysql/support.js';
import { createTestSchema, type TestSchema } from '../postgres/support.js';
import { requireService } from '../support/services.js';
import { dynamoDbStore, mysqlStore, postgresStore, redisStore, type StoreSetup } from '../support/stores.js';
import { contextOf, DOWN_STORES, downStores, sleep, sqsEventOf, unique } from './support.js';

// SQS batches on the machine's Redis, PostgreSQL and MariaDB (MySqlStore) and on DynamoDB (dynalite): each record
// takes effect once however often SQS delivers it, and the handler answers with the partial batch response
// (`batchItemFailures`) that makes SQS deliver again only the records that failed. Transactional mode on
// PostgreSQL and MySQL: the record's effect commits with its claim.

const stores: StoreSetup[] = [
  redisStore('lambda_sqs'),
  postgresStore('lambda_sqs'),
  mysqlStore('lambda_sqs'),
  dynamoDbStore('lambda_sqs'),
];

/** A record handler that counts runs per message id and throws for the ids in `failing` (once each by default). */
function recorder(failing: ReadonlyMap<string, number> = new Map()) {
  const runs = new Map<string, number>();
  const left = new Map(failing);
  const attempts: number[] = [];
  const handler = async (record: SQSRecord, { attempt }: { attempt: number }) => {
    runs.set(record.messageId, (runs.get(record.messageId) ?? 0) + 1);
    attempts.push(attempt);
    const failures = left.get(record.messageId) ?? 0;
    if (failures > 0) {
      left.set(record.messageId, failures - 1);
      throw new Error(`cannot process ${record.messageId} yet`);
    }
    return { shipped: record.messageId };
  };
  return { runs, attempts, handler };
}

describe.each(stores)('sqsIdempotency on $name', (setup) => {
  let store: Store;
  beforeAll(() => {
    store = setup.create();
  });

  it('a failing record is reported in batchItemFailures; the redelivery runs it alone, the others not again', async () => {
    const [a, b, c] = [unique('a'), unique('b'), unique('c')];
    const { runs, handler } = recorder(new Map([[b, 1]]));
    const consume = sqsIdempotency({ store })(handler);
    const batch = [{ id: a }, { id: b }, { id: c }];
    expect(await consume(sqsEventOf(batch), contextOf())).toEqual({
      batchItemFailures: [{ itemIdentifier: b }],
    });
    // SQS delivers the whole batch again (a visibility timeout that ran out, a function error elsewhere).
    expect(await consume(sqsEventOf(batch, { receiveCount: 2 }), contextOf())).toEqual({
      batchItemFailures: [],
    });
    expect(Object.fromEntries(runs)).toEqual({ [a]: 1, [b]: 2, [c]: 1 });
    // And once more: every record is a duplicate now.
    expect(await consume(sqsEventOf(batch, { receiveCount: 3 }), contextOf())).toEqual({
      batchItemFailures: [],
    });
    expect(Object.fromEntries(runs)).toEqual({ [a]: 1, [b]: 2, [c]: 1 });
  });

  it('a FIFO batch stops at its first failure: the records after it are reported too, and not run', async () => {
    const [a, b, c] = [unique('a'), unique('b'), unique('c')];
    const { runs, handler } = recorder(new Map([[b, 1]]));
    const consume = sqsIdempotency({ store })(handler);
    const batch = [{ id: a }, { id: b }, { id: c }];
    const first = await consume(sqsEventOf(batch, { fifo: true }), contextOf());
    expect(first).toEqual({ batchItemFailures: [{ itemIdentifier: b }, { itemIdentifier: c }] });
    expect(runs.has(c)).toBe(false);
    const again = await consume(
      sqsEventOf([{ id: b }, { id: c }], { fifo: true, receiveCount: 2 }),
      contextOf(),
    );
    expect(again).toEqual({ batchItemFailures: [] });
    expect(Object.fromEntries(runs)).toEqual({ [a]: 1, [b]: 2, [c]: 1 });
  });

  it('key: two messages that carry one event (a producer that sent it twice) take effect once', async () => {
    const { runs, handler } = recorder();
    const consume = sqsIdempotency({ store, key: (record) => JSON.parse(record.body).eventId })(handler);
    const eventId = unique('event');
    const body = JSON.stringify({ eventId });
    const batch = [
      { id: unique('m'), body },
      { id: unique('m'), body },
    ];
    expect(await consume(sqsEventOf(batch), contextOf())).toEqual({ batchItemFailures: [] });
    expect([...runs.values()]).toEqual([1]);
  });

  it('a record another invocation is processing right now is reported failed (busy), and deduplicated after', async () => {
    const id = unique('busy');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let runs = 0;
    // Two execution environments (two instances of the function), as concurrent deliveries land in.
    const environment = () =>
      sqsIdempotency({ store })(async () => {
        runs++;
        await gate;
      });
    const [consume, other] = [environment(), environment()];
    const first = consume(sqsEventOf([{ id }]), contextOf());
    await sleep(50);
    expect(await other(sqsEventOf([{ id }], { receiveCount: 2 }), contextOf())).toEqual({
      batchItemFailures: [{ itemIdentifier: id }],
    });
    release();
    expect(await first).toEqual({ batchItemFailures: [] });
    expect(await consume(sqsEventOf([{ id }], { receiveCount: 3 }), contextOf())).toEqual({
      batchItemFailures: [],
    });
    expect(runs).toBe(1);
  });

  it("a timed-out invocation's record is taken over by the next delivery once the invocation's time is up", async () => {
    const id = unique('timeout');
    const { attempts, handler } = recorder();
    // The first environment never answers, as an invocation Lambda kills at its timeout; SQS then delivers the
    // record to another environment of the function.
    const stuck = sqsIdempotency({ store, leaseMs: 60_000 })(() => new Promise<never>(() => {}));
    const consume = sqsIdempotency({ store, leaseMs: 60_000 })(handler);
    void stuck(sqsEventOf([{ id }]), contextOf(500));
    await sleep(150);
    expect(await consume(sqsEventOf([{ id }], { receiveCount: 2 }), contextOf())).toEqual({
      batchItemFailures: [{ itemIdentifier: id }],
    });
    await sleep(500);
    // The record's claim ended with the first invocation, not a whole leaseMs (60 s) later.
    expect(await consume(sqsEventOf([{ id }], { receiveCount: 3 }), contextOf())).toEqual({
      batchItemFailures: [],
    });
    expect(attempts).toEqual([2]);
  });

  it('the record handler gets the claim and the Lambda context of its own invocation', async () => {
    const seen: { token: number; requestId: string }[] = [];
    const consume = sqsIdempotency({ store })(
      async (_record, { token, lambda }: SqsRecordContext<Context>) => {
        seen.push({ token, requestId: lambda.awsRequestId });
      },
    );
    const [one, two] = [contextOf(), contextOf()];
    await Promise.all([
      consume(sqsEventOf([{ id: unique('m') }]), one),
      consume(sqsEventOf([{ id: unique('m') }]), two),
    ]);
    expect(seen.map((s) => s.requestId).sort()).toEqual([one.awsRequestId, two.awsRequestId].sort());
    expect(seen.every((s) => Number.isInteger(s.token))).toBe(true);
  });
});

/**
 * A store in transactional mode with a `shipments` table beside it: `ship` inserts the record's message id through
 * the claim's transaction, `shipped` counts the committed rows of one id.
 */
interface TransactionalSetup {
  readonly name: string;
  store(): Store;
  ship(record: SQSRecord, context: SqsRecordContext): Promise<void>;
  shipped(messageId: string): Promise<number>;
}

function postgresTransactional(): TransactionalSetup {
  let schema: TestSchema;
  beforeAll(async () => {
    await requireService('postgres');
    schema = await createTestSchema('lambda_sqs_tx', 4);
    await schema.pool.query(`CREATE TABLE ${schema.table('shipments')} (message_id text PRIMARY KEY)`);
  });
  afterAll(async () => {
    await schema?.drop();
  });
  return {
    name: 'PostgreSQL',
    store: () => new PostgresStore({ pool: schema.pool, schema: schema.schema }).transactional(),
    ship: async (record, context) => {
      await transactionOf(context).query(`INSERT INTO ${schema.table('shipments')} VALUES ($1)`, [
        record.messageId,
      ]);
    },
    shipped: async (messageId) => {
      const sql = `SELECT count(*)::int AS n FROM ${schema.table('shipments')} WHERE message_id = $1`;
      return (await schema.pool.query(sql, [messageId])).rows[0].n;
    },
  };
}

function mysqlTransactional(): TransactionalSetup {
  let table: TestTable;
  const shipments = () => `\`${table.table}_shipments\``;
  beforeAll(async () => {
    await requireService('mariadb');
    table = await createTestTable('lambda_sqs_tx', 'mysql2', { size: 4 });
    await query(table.pool, `CREATE TABLE ${shipments()} (message_id VARCHAR(100) PRIMARY KEY)`);
  });
  afterAll(async () => {
    if (table === undefined) return;
    await query(table.pool, `DROP TABLE IF EXISTS ${shipments()}`);
    await table.drop();
  });
  return {
    name: 'MySQL',
    store: () => new MySqlStore({ pool: table.pool, table: table.table }).transactional(),
    ship: async (record, context) => {
      await connectionOf(context).query(`INSERT INTO ${shipments()} VALUES (?)`, [record.messageId]);
    },
    shipped: async (messageId) => {
      const sql = `SELECT count(*) AS n FROM ${shipments()} WHERE message_id = ?`;
      return Number((await query(table.pool, sql, [messageId]))[0]?.n);
    },
  };
}

describe.each([postgresTransactional(), mysqlTransactional()])(
  'sqsIdempotency on $name in transactional mode',
  (setup) => {
    it("the effect commits with the record; a timed-out invocation's transaction ends with it, and the next delivery runs", async () => {
      const store = setup.store();
      const id = unique('tx');
      // A redelivery that hangs: it holds the record's transaction (its row lock) and the runs counter. Both end
      // with the invocation, not a whole leaseMs (60 s) later.
      const stuck = sqsIdempotency({ store, leaseMs: 60_000 })(async (record: SQSRecord, context) => {
        await setup.ship(record, context);
        await new Promise(() => {});
      });
      const consume = sqsIdempotency({ store, leaseMs: 60_000 })(setup.ship);
      void stuck(sqsEventOf([{ id }], { receiveCount: 2 }), contextOf(500));
      await sleep(150);
      expect(await consume(sqsEventOf([{ id }], { receiveCount: 3 }), contextOf())).toEqual({
        batchItemFailures: [{ itemIdentifier: id }],
      });
      await sleep(600);
      expect(await consume(sqsEventOf([{ id }], { receiveCount: 4 }), contextOf())).toEqual({
        batchItemFailures: [],
      });
      expect(await consume(sqsEventOf([{ id }], { receiveCount: 5 }), contextOf())).toEqual({
        batchItemFailures: [],
      });
      expect(await setup.shipped(id)).toBe(1);
    });
  },
);

describe('sqsIdempotency with the store down', () => {
  let down: Awaited<ReturnType<typeof downStores>>;
  beforeAll(async () => {
    down = await downStores();
  });
  afterAll(async () => {
    await down.close();
  });

  it.each(DOWN_STORES)('%s refusing connections: every record is reported, none runs', async (kind) => {
    let runs = 0;
    const consume = sqsIdempotency({ store: down[kind], breaker: false })(async () => {
      runs++;
    });
    const [a, b] = [unique('a'), unique('b')];
    expect(await consume(sqsEventOf([{ id: a }, { id: b }]), contextOf())).toEqual({
      batchItemFailures: [{ itemIdentifier: a }, { itemIdentifier: b }],
    });
    expect(runs).toBe(0);
  });
});
