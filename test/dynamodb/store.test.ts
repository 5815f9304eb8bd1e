/**
 * What the conformance kit does not show of the DynamoDB store: how many calls each transition sends (counted by a
 * middleware on the client's own stack), a binary body kept byte for byte as a B attribute, records past their
 * retention that TTL has not removed, the table `migrate` makes, and the options it refuses.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import {
  CreateTableCommand,
  DescribeTableCommand,
  GetItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isInvalidOptionsError } from '../../src/index.js';
import { DynamoDbStore, migrate } from '../../src/stores/dynamodb/index.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import { type Backend, returnItemOnRefusal, startDynalite } from './support/dynalite.js';

const begin = { leaseMs: 10_000, retentionMs: 60_000 };
const ok = { kind: 'ok' };

let backend: Backend;
/** Names of the commands the counted client sent, in order. */
const sent: string[] = [];
let store: DynamoDbStore;
let clock: FakeClock;

beforeAll(async () => {
  backend = await startDynalite();
  const counted = backend.newClient();
  counted.middlewareStack.add(
    (next, context) => (args) => {
      sent.push(context.commandName ?? '?');
      return next(args);
    },
    { step: 'initialize', name: 'countCommands' },
  );
  clock = new FakeClock();
  store = new DynamoDbStore({ client: counted, clock: clock.now });
});
afterAll(async () => backend?.close());
beforeEach(() => {
  returnItemOnRefusal(true);
});

/** The commands `run` sends. */
async function counting<T>(run: () => Promise<T>): Promise<{ result: T; commands: string[] }> {
  sent.length = 0;
  const result = await run();
  return { result, commands: [...sent] };
}

const outcome = (body: Uint8Array | string = '{"id":1}') => ({
  status: 201,
  headers: [['content-type', 'application/json']] as const,
  body: typeof body === 'string' ? Buffer.from(body) : body,
  encoding: 'identity' as const,
  storage: 'inline' as const,
});

async function claimed(key: string, fingerprint = 'f1'): Promise<number> {
  const claim = await store.begin({ key, fingerprint, ...begin });
  if (claim.kind !== 'acquired') throw new Error(`expected acquired, got ${claim.kind}`);
  return claim.token;
}

describe('one conditional write per transition', () => {
  it('a claim on a new key, complete, renew, release, get and delete: one call each', async () => {
    const key = randomUUID();
    const first = await counting(() => store.begin({ key, fingerprint: 'f1', ...begin }));
    expect(first.commands).toEqual(['PutItemCommand']);
    expect(first.result.kind).toBe('acquired');
    const token = first.result.kind === 'acquired' ? first.result.token : 0;
    expect(await counting(() => store.renew({ key, token, leaseMs: 10_000 }))).toEqual({
      result: ok,
      commands: ['UpdateItemCommand'],
    });
    const done = await counting(() =>
      store.complete({ key, token, outcome: outcome(), retentionMs: 60_000 }),
    );
    expect(done).toEqual({ result: ok, commands: ['UpdateItemCommand'] });
    expect((await counting(() => store.get(key))).commands).toEqual(['GetItemCommand']);
    expect(await counting(() => store.delete(key))).toEqual({
      result: true,
      commands: ['UpdateItemCommand'],
    });

    const other = randomUUID();
    const again = await claimed(other);
    expect(await counting(() => store.release({ key: other, token: again }))).toEqual({
      result: ok,
      commands: ['UpdateItemCommand'],
    });
  });

  it('a refused claim answers from the item the refusal carries: replay, in progress, mismatch in one call', async () => {
    const key = randomUUID();
    const token = await claimed(key);
    const busy = await counting(() => store.begin({ key, fingerprint: 'f1', ...begin }));
    expect(busy).toEqual({
      result: { kind: 'inProgress', retryAfterMs: 10_000, attempt: 1 },
      commands: ['PutItemCommand'],
    });
    const other = await counting(() => store.begin({ key, fingerprint: 'f2', ...begin }));
    expect(other).toEqual({ result: { kind: 'mismatch' }, commands: ['PutItemCommand'] });
    await store.complete({ key, token, outcome: outcome('kept'), retentionMs: 60_000 });
    const replay = await counting(() => store.begin({ key, fingerprint: 'f1', ...begin }));
    expect(replay.commands).toEqual(['PutItemCommand']);
    expect(replay.result.kind === 'replay' && Buffer.from(replay.result.outcome.body).toString()).toBe(
      'kept',
    );
  });

  it('a claim that continues a record (after a release, a takeover) is a second write, conditioned on the first', async () => {
    const key = randomUUID();
    const token = await claimed(key);
    await store.release({ key, token });
    const afterRelease = await counting(() => store.begin({ key, fingerprint: 'f2', ...begin }));
    expect(afterRelease.commands).toEqual(['PutItemCommand', 'PutItemCommand']);
    expect(afterRelease.result).toMatchObject({ kind: 'acquired', attempt: 2, takeover: false });
    clock.advance(10_000);
    const takeover = await counting(() => store.begin({ key, fingerprint: 'f2', ...begin }));
    expect(takeover.commands).toEqual(['PutItemCommand', 'PutItemCommand']);
    expect(takeover.result).toMatchObject({ kind: 'acquired', attempt: 3, takeover: true });
    expect((await store.inspector.record(key))?.takenOver).toBe(true);
  });

  it('where the refusal carries no item (an emulator without ReturnValuesOnConditionCheckFailure), the item is read once', async () => {
    returnItemOnRefusal(false);
    const key = randomUUID();
    await claimed(key);
    const busy = await counting(() => store.begin({ key, fingerprint: 'f1', ...begin }));
    expect(busy.commands).toEqual(['PutItemCommand', 'GetItemCommand']);
    expect(busy.result.kind).toBe('inProgress');
  });
});

describe('the outcome as stored', () => {
  it('a binary body is a B attribute and replays byte for byte; headers are a list, in order, duplicates kept', async () => {
    const key = randomUUID();
    const token = await claimed(key);
    const body = randomBytes(100_000);
    const headers = [
      ['content-type', 'application/octet-stream'],
      ['link', '</a>'],
      ['link', '</b>'],
    ] as const;
    await store.complete({ key, token, outcome: { ...outcome(body), headers }, retentionMs: 60_000 });
    const { Item } = await backend.client.send(
      new GetItemCommand({ TableName: 'oncely_keys', Key: { pk: { S: key } }, ConsistentRead: true }),
    );
    expect(Buffer.from(Item?.body?.B ?? []).equals(body)).toBe(true);
    expect(Item?.headers?.L?.map((pair) => pair.L?.map((part) => part.S))).toEqual(headers);
    const replay = await store.begin({ key, fingerprint: 'f1', ...begin });
    expect(replay.kind).toBe('replay');
    if (replay.kind !== 'replay') return;
    expect(Buffer.from(replay.outcome.body).equals(body)).toBe(true);
    expect(replay.outcome.headers).toEqual(headers);
    const view = await store.inspector.record(key);
    expect(view?.outcome?.bodyBytes).toBe(100_000);
    expect(view?.outcome && 'body' in view.outcome).toBe(false);
  });
});

describe('expiry by the stored times, never by TTL', () => {
  it('a record past its retention that TTL has not removed is not a record: get, claim and survey agree', async () => {
    const key = randomUUID();
    const token = await claimed(key);
    await store.complete({ key, token, outcome: outcome(), retentionMs: 1_000 });
    clock.advance(1_000);
    const raw = await backend.client.send(
      new GetItemCommand({ TableName: 'oncely_keys', Key: { pk: { S: key } }, ConsistentRead: true }),
    );
    expect(raw.Item?.state?.S).toBe('completed');
    expect(await store.get(key)).toBeUndefined();
    expect(await store.inspector.record(key)).toBeUndefined();
    const survey = await store.inspector.survey({ limit: 10, scanLimit: 100_000, keyPrefix: key });
    expect(survey.counts.records).toBe(0);
    const fresh = await counting(() => store.begin({ key, fingerprint: 'f2', ...begin }));
    expect(fresh.result).toMatchObject({ kind: 'acquired', attempt: 1, takeover: false });
    expect(fresh.result.kind === 'acquired' && fresh.result.token > token).toBe(true);
    expect(fresh.commands).toEqual(['PutItemCommand']);
  });

  it('a live record whose ttl attribute has passed is still replayed: the store never reads ttl', async () => {
    const key = randomUUID();
    const token = await claimed(key);
    await store.complete({ key, token, outcome: outcome('still here'), retentionMs: 60_000 });
    await backend.client.send(
      new UpdateItemCommand({
        TableName: 'oncely_keys',
        Key: { pk: { S: key } },
        UpdateExpression: 'SET #ttl = :past',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':past': { N: '1' } },
      }),
    );
    const replay = await store.begin({ key, fingerprint: 'f1', ...begin });
    expect(replay.kind === 'replay' && Buffer.from(replay.outcome.body).toString()).toBe('still here');
  });

  it('ttl is written in epoch seconds, past both the record and its token', async () => {
    const key = randomUUID();
    await claimed(key);
    const { Item } = await backend.client.send(
      new GetItemCommand({ TableName: 'oncely_keys', Key: { pk: { S: key } }, ConsistentRead: true }),
    );
    const ttl = Number(Item?.ttl?.N);
    expect(ttl * 1000).toBeGreaterThan(Number(Item?.expiresAt?.N));
    expect(ttl * 1000).toBeGreaterThan(Number(Item?.token?.N));
    expect(ttl).toBeLessThan((clock.now() + begin.retentionMs) / 1000 + 2 * 3_600);
  });
});

describe('what the store refuses to read or write', () => {
  it('an item that is not an oncely record is CorruptRecordError, never a replay', async () => {
    const key = randomUUID();
    const token = await claimed(key);
    await store.complete({ key, token, outcome: outcome('{"id":1}'), retentionMs: 60_000 });
    const tamper = (name: string, value: { N: string } | { S: string }) =>
      backend.client.send(
        new UpdateItemCommand({
          TableName: 'oncely_keys',
          Key: { pk: { S: key } },
          UpdateExpression: 'SET #a = :v',
          ExpressionAttributeNames: { '#a': name },
          ExpressionAttributeValues: { ':v': value },
        }),
      );
    await tamper('bodyBytes', { N: '3' });
    await expect(store.begin({ key, fingerprint: 'f1', ...begin })).rejects.toThrow(
      /body of 8 bytes, recorded as 3/,
    );
    await tamper('state', { S: 'done' });
    await expect(store.get(key)).rejects.toMatchObject({ name: 'CorruptRecordError' });
  });

  it('a label with control characters is refused before anything is sent', async () => {
    sent.length = 0;
    await expect(
      store.begin({ key: randomUUID(), fingerprint: 'f', ...begin, label: 'POST\n/x' }),
    ).rejects.toSatisfy(isInvalidOptionsError);
    expect(sent).toEqual([]);
  });
});

describe('migrate and options', () => {
  it('migrate is idempotent, reports TTL unsupported on dynalite, and refuses a table with another key', async () => {
    expect(await migrate(backend.client, { table: 'oncely_keys' })).toEqual({
      created: false,
      ttl: 'unsupported',
    });
    const made = await new DynamoDbStore({ client: backend.client, table: 'second_table' }).migrate();
    expect(made).toEqual({ created: true, ttl: 'unsupported' });
    // Keyed on another attribute (pk only in an index), keyed on a number pk, keyed on pk and a sort key.
    const tables: Record<string, ConstructorParameters<typeof CreateTableCommand>[0]> = {
      other_key: {
        TableName: 'other_key',
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        AttributeDefinitions: [
          { AttributeName: 'id', AttributeType: 'S' },
          { AttributeName: 'pk', AttributeType: 'S' },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: 'by_pk',
            KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
            Projection: { ProjectionType: 'KEYS_ONLY' },
          },
        ],
        BillingMode: 'PAY_PER_REQUEST',
      },
      number_key: {
        TableName: 'number_key',
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'N' }],
        BillingMode: 'PAY_PER_REQUEST',
      },
      sort_key: {
        TableName: 'sort_key',
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
      },
    };
    for (const [table, definition] of Object.entries(tables)) {
      await backend.client.send(new CreateTableCommand(definition));
      await expect(migrate(backend.client, { table }), table).rejects.toThrow(/another key schema/);
    }
  });

  it('refuses options it cannot use, at construction', () => {
    const client = backend.client;
    const refused = (make: () => unknown) => {
      try {
        make();
      } catch (error) {
        return isInvalidOptionsError(error) ? (error as Error).message : 'another error';
      }
      return 'accepted';
    };
    expect(refused(() => new DynamoDbStore({ client, table: 'x' }))).toMatch(/table must be/);
    expect(refused(() => new DynamoDbStore({ client: {} as never }))).toMatch(/DynamoDBClient/);
    expect(refused(() => new DynamoDbStore({ client, clok: Date.now } as never))).toMatch(/unknown option/);
    expect(refused(() => new DynamoDbStore({ client, clock: 5 as never }))).toMatch(/clock/);
    expect(refused(() => new DynamoDbStore({ client }))).toBe('accepted');
  });

  it('names itself for telemetry: aws.dynamodb and the table', () => {
    const named = new DynamoDbStore({ client: backend.client, table: 'payments_keys' });
    expect(named.endpoint).toEqual({ system: 'aws.dynamodb', collection: 'payments_keys' });
    expect(named.name).toBe('dynamodb');
  });

  it("stats are DescribeTable's approximate counts, whatever the table holds (dynalite keeps them at 0)", async () => {
    const { Table } = await backend.client.send(new DescribeTableCommand({ TableName: 'oncely_keys' }));
    expect(await store.stats()).toEqual({ records: Table?.ItemCount, bytes: Table?.TableSizeBytes });
  });
});
