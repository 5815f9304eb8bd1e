/**
 * DynamoDB's 400 KB item limit: an outcome that cannot fit is refused at complete with `OutcomeTooLargeError`,
 * before sending when the store can count it, from DynamoDB's own refusal when only the whole item is over; the
 * record is never half written. Through the engine: what the caller sees, and the remedy (`maxBodyBytes`).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, isInProgressError } from '../../src/index.js';
import {
  DynamoDbStore,
  isOutcomeTooLargeError,
  MAX_ITEM_BYTES,
  type OutcomeTooLargeError,
} from '../../src/stores/dynamodb/index.js';
import { type Backend, returnItemOnRefusal, startDynalite } from './support/dynalite.js';

const begin = { leaseMs: 10_000, retentionMs: 60_000 };
let backend: Backend;
let store: DynamoDbStore;
const sent: string[] = [];

beforeAll(async () => {
  returnItemOnRefusal(true);
  backend = await startDynalite();
  const client = backend.newClient();
  client.middlewareStack.add(
    (next, context) => (args) => {
      sent.push(context.commandName ?? '?');
      return next(args);
    },
    { step: 'initialize', name: 'countCommands' },
  );
  store = new DynamoDbStore({ client });
});
afterAll(async () => backend?.close());

const outcome = (body: Uint8Array) => ({
  status: 200,
  headers: [['content-type', 'application/octet-stream']] as const,
  body,
  encoding: 'identity' as const,
  storage: 'inline' as const,
});

async function refusal(run: () => Promise<unknown>): Promise<OutcomeTooLargeError> {
  const error = await run().then(
    () => undefined,
    (failure: unknown) => failure,
  );
  if (!isOutcomeTooLargeError(error)) throw new Error(`expected OutcomeTooLargeError, got ${String(error)}`);
  return error;
}

describe('400 KB per item', () => {
  it('an outcome that alone exceeds the limit is refused before sending; the claim still holds', async () => {
    const key = randomUUID();
    const claim = await store.begin({ key, fingerprint: 'f', ...begin });
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    sent.length = 0;
    const error = await refusal(() =>
      store.complete({
        key,
        token: claim.token,
        outcome: outcome(randomBytes(MAX_ITEM_BYTES)),
        retentionMs: 60_000,
      }),
    );
    expect(sent).toEqual([]);
    expect(error.code).toBe('ONCELY_INVALID_OPTIONS');
    expect(error.itemBytes).toBeGreaterThan(MAX_ITEM_BYTES);
    expect(error.message).toMatch(/oncely_keys.*maxBodyBytes/);
    expect((await store.get(key))?.state).toBe('inProgress');
    const small = outcome(Buffer.from('fits'));
    expect(await store.complete({ key, token: claim.token, outcome: small, retentionMs: 60_000 })).toEqual({
      kind: 'ok',
    });
  });

  it("an outcome that fits alone but not beside the claim's fingerprint is refused by DynamoDB: same error", async () => {
    const key = randomUUID();
    const fingerprint = 'x'.repeat(30_000);
    const claim = await store.begin({ key, fingerprint, ...begin });
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    const body = randomBytes(MAX_ITEM_BYTES - 10_000);
    sent.length = 0;
    const error = await refusal(() =>
      store.complete({ key, token: claim.token, outcome: outcome(body), retentionMs: 60_000 }),
    );
    expect(sent).toEqual(['UpdateItemCommand']);
    expect(error.itemBytes).toBeUndefined();
    expect((error.cause as Error).name).toBe('ValidationException');
    const record = await store.get(key);
    expect(record?.state).toBe('inProgress');
    expect(record?.outcome).toBeUndefined();
    expect(record?.fingerprint).toBe(fingerprint);
  });
});

describe('through the engine', () => {
  it('the caller gets the error at once (not retried as an outage); the key stays claimed until its lease ends', async () => {
    const engine = new Engine({ store, leaseMs: 5_000 });
    const key = randomUUID();
    const body = randomBytes(450_000);
    let runs = 0;
    const request = {
      key,
      fingerprint: 'f',
      run: async () => {
        runs++;
        return body;
      },
      settle: (result: Uint8Array) => ({
        keep: true as const,
        outcome: { status: 200, headers: [], body: result },
      }),
    };
    sent.length = 0;
    const error = await engine.execute(request).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(isOutcomeTooLargeError(error)).toBe(true);
    expect(sent.filter((name) => name === 'UpdateItemCommand')).toEqual([]);
    expect(runs).toBe(1);
    expect((await store.get(key))?.state).toBe('inProgress');
    const again = await engine.execute(request).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(isInProgressError(again)).toBe(true);
    expect(runs).toBe(1);
  });

  it('with maxBodyBytes below the limit, such a body is not retained and the key completes: replays say so', async () => {
    const engine = new Engine({ store, maxBodyBytes: 300_000 });
    const key = randomUUID();
    let runs = 0;
    const request = {
      key,
      fingerprint: 'f',
      run: async () => {
        runs++;
        return randomBytes(450_000);
      },
      settle: (result: Uint8Array) => ({
        keep: true as const,
        outcome: { status: 201, headers: [], body: result },
      }),
    };
    expect((await engine.execute(request)).kind).toBe('executed');
    const replay = await engine.execute(request);
    expect(replay.kind === 'replayed' && replay.outcome).toEqual({
      retained: false,
      status: 201,
      headers: [],
    });
    expect(runs).toBe(1);
  });
});
