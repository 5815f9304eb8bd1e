/**
 * @module The DynamoDB tests' backend: dynalite (DynamoDB's API over an in-memory LevelDB) started in the test
 * process on a free port, a client for it, and a table made by the store's own `migrate`.
 *
 * dynalite 4.0.0 predates `ReturnValuesOnConditionCheckFailure` (DynamoDB added it in 2023): it drops the
 * parameter and refuses a conditional write without the item. `returnItemOnRefusal(true)` teaches every dynalite
 * of this process what DynamoDB does (the refusal's body carries `Item`, the item as it was, when asked with
 * `ALL_OLD` and there was one), so the store's one-round-trip path runs as it does on AWS; with it off, the
 * store's fallback for such emulators (a consistent read after the refusal) runs instead. Nothing else of
 * dynalite is changed.
 */
// dynalite's declarations, for the projects that reach this file without including its folder (the Nest tests
// import test/support/stores.ts, which imports this).
/// <reference path="./dynalite-module.d.ts" />
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { migrate } from '../../../src/stores/dynamodb/index.js';

const require = createRequire(import.meta.url);

interface DynaliteDb {
  checkConditional(
    data: Record<string, unknown>,
    existing: unknown,
  ): { body: Record<string, unknown> } | null;
}

let returnItem = false;
let patched = false;

export function returnItemOnRefusal(on: boolean): void {
  returnItem = on;
  if (patched) return;
  patched = true;
  for (const action of ['putItem', 'updateItem', 'deleteItem']) {
    const validation = require(`dynalite/validations/${action}.js`) as { types: Record<string, unknown> };
    validation.types.ReturnValuesOnConditionCheckFailure = { type: 'String', enum: ['ALL_OLD', 'NONE'] };
  }
  const db = require('dynalite/db/index.js') as DynaliteDb;
  const check = db.checkConditional;
  db.checkConditional = (data, existing) => {
    const refusal = check(data, existing);
    if (refusal !== null && returnItem && existing && data.ReturnValuesOnConditionCheckFailure === 'ALL_OLD')
      refusal.body.Item = existing;
    return refusal;
  };
}

export interface Backend {
  readonly endpoint: string;
  readonly port: number;
  readonly client: DynamoDBClient;
  /** A client of its own (another connection pool, other settings), closed with the backend. */
  newClient(config?: DynamoDBClientConfig): DynamoDBClient;
  close(): Promise<void>;
}

export const CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' };

export function clientFor(endpoint: string, config: DynamoDBClientConfig = {}): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: CREDENTIALS, ...config });
}

/** dynalite on a free port with the store's table (`table`) made by `migrate`. */
export async function startDynalite(table = 'oncely_keys'): Promise<Backend> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  // Node closes a keep-alive connection idle for 5 s, racing a client that reuses it at that moment (the request
  // then fails with ECONNRESET): DynamoDB's endpoints keep theirs far longer.
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const clients: DynamoDBClient[] = [];
  const newClient = (config?: DynamoDBClientConfig) => {
    const client = clientFor(endpoint, config);
    clients.push(client);
    return client;
  };
  const client = newClient();
  await migrate(client, { table });
  return {
    endpoint,
    port,
    client,
    newClient,
    close: async () => {
      for (const each of clients) each.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
