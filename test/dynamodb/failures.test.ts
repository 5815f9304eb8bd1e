/**
 * Failures of the calls the DynamoDB store sends, as the engine needs them: `StoreUnavailableError` with the SDK's
 * error as `cause` for a missing table (naming it and `migrate`), a refused connection, a timeout and throttling.
 */
import { createServer, type Server, type Socket } from 'node:net';
import {
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ThrottlingException,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreUnavailableError, type StoreUnavailableError } from '../../src/index.js';
import { storeError } from '../../src/stores/dynamodb/errors.js';
import { DynamoDbStore } from '../../src/stores/dynamodb/index.js';
import { type Backend, clientFor, startDynalite } from './support/dynalite.js';

const begin = { key: 'k', fingerprint: 'f', leaseMs: 10_000, retentionMs: 60_000 };
let backend: Backend;
beforeAll(async () => {
  backend = await startDynalite();
});
afterAll(async () => backend?.close());

async function unavailable(run: () => Promise<unknown>): Promise<StoreUnavailableError> {
  const error = await run().then(
    () => undefined,
    (failure: unknown) => failure,
  );
  if (!isStoreUnavailableError(error))
    throw new Error(`expected StoreUnavailableError, got ${String(error)}`);
  return error;
}

async function listening(onSocket: (socket: Socket) => void): Promise<{ server: Server; port: number }> {
  const server = createServer(onSocket);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { server, port: typeof address === 'object' && address !== null ? address.port : 0 };
}

describe('failures become StoreUnavailableError', () => {
  it('a missing table: named, with migrate() as the fix, on every call', async () => {
    const store = new DynamoDbStore({ client: backend.client, table: 'missing_table' });
    for (const call of [
      () => store.begin(begin),
      () => store.get('k'),
      () => store.renew({ key: 'k', token: 1, leaseMs: 1 }),
      () => store.inspector.survey({ limit: 1, scanLimit: 1 }),
      () => store.stats(),
    ]) {
      const error = await unavailable(call);
      expect(error.message).toMatch(/table "missing_table" does not exist.*store\.migrate\(\)/);
      expect((error.cause as Error).name).toBe('ResourceNotFoundException');
    }
  });

  it('a refused connection (nothing listens on the port)', async () => {
    const { server, port } = await listening(() => {});
    await new Promise((resolve) => server.close(resolve));
    const client = clientFor(`http://127.0.0.1:${port}`, { maxAttempts: 1 });
    const error = await unavailable(() => new DynamoDbStore({ client }).begin(begin));
    client.destroy();
    expect(error.message).toMatch(/^dynamodb begin failed/);
    expect(String((error.cause as { code?: string }).code)).toBe('ECONNREFUSED');
  });

  it('a timeout (the endpoint takes the connection and never answers)', async () => {
    const sockets: Socket[] = [];
    const { server, port } = await listening((socket) => sockets.push(socket));
    const client = clientFor(`http://127.0.0.1:${port}`, {
      maxAttempts: 1,
      requestHandler: { requestTimeout: 200, connectionTimeout: 200, throwOnRequestTimeout: true },
    });
    const error = await unavailable(() => new DynamoDbStore({ client }).get('k'));
    client.destroy();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
    expect(error.message).toMatch(/^dynamodb get failed/);
    expect((error.cause as Error).name).toBe('TimeoutError');
  });

  it("throttling (the SDK's own exceptions, once its retries gave up) says so", () => {
    const metadata = { $metadata: {}, message: 'Rate of requests exceeds the allowed throughput' };
    for (const error of [
      new ProvisionedThroughputExceededException(metadata),
      new ThrottlingException(metadata),
      new RequestLimitExceeded(metadata),
    ]) {
      const mapped = storeError('begin', 'oncely_keys', error);
      expect(isStoreUnavailableError(mapped)).toBe(true);
      expect(mapped.message).toBe(`dynamodb begin was throttled (${error.name}: ${metadata.message})`);
      expect(mapped.cause).toBe(error);
    }
  });
});
