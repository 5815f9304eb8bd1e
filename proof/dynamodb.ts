/**
 * @module The proof's DynamoDB store (kind `dynamodb`), on dynalite. The harness's side: a dynalite process of the
 * run's own on a LevelDB directory (proof/dynalite-server.ts) behind the fault proxy, the table made by the store's
 * `migrate`, a restart fault that SIGKILLs dynalite and starts it again on the same port and directory (what it
 * acknowledged is in LevelDB's log, written before the answer, so a killed process loses none of it), and a peek at
 * a record. The app server's side: the client and the store as docs/stores/dynamodb.md shows, through the proxy.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Store } from '../src/core/store.js';
import { DynamoDbStore, migrate } from '../src/stores/dynamodb/index.js';
import { freePort } from '../test/redis/support/redis-server.js';
import { startFaultProxy } from './proxy.js';
import type { StoreUnderTest } from './stores.js';
import type { StoreConnection } from './types.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LAUNCHER = fileURLToPath(new URL('./dynalite-server.ts', import.meta.url));
// dynalite checks no credentials; the SDK wants some.
const CREDENTIALS = { accessKeyId: 'proof', secretAccessKey: 'proof' };
const REGION = 'us-east-1';

/** dynalite on `port` and `dir`; resolves once it listens. */
async function startDynalite(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', LAUNCHER, String(port), dir], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('dynalite did not start within 30 s')), 30_000);
    createInterface({ input: child.stdout! }).once('line', () => {
      clearTimeout(timer);
      resolve();
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`dynalite exited with ${code ?? signal} before listening`));
    });
  });
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

export async function startDynamoStore(table: string): Promise<StoreUnderTest> {
  const dir = mkdtempSync(join(tmpdir(), 'oncely-proof-dynalite-'));
  const port = await freePort();
  let node = await startDynalite(port, dir);
  const proxy = await startFaultProxy(port);
  const direct = new DynamoDBClient({
    endpoint: `http://127.0.0.1:${port}`,
    region: REGION,
    credentials: CREDENTIALS,
  });
  await migrate(direct, { table });
  const peekStore = new DynamoDbStore({ client: direct, table });
  return {
    kind: 'dynamodb',
    connection: { kind: 'dynamodb', endpoint: `http://127.0.0.1:${proxy.port}`, table },
    proxies: [proxy],
    async restart(downMs) {
      await kill(node);
      await new Promise((resolve) => setTimeout(resolve, downMs));
      node = await startDynalite(port, dir);
      return `dynalite :${port} SIGKILL, down ${downMs} ms, restarted on its LevelDB directory`;
    },
    async peek(id) {
      const record = await peekStore.get(id);
      return record && { state: record.state, token: record.token };
    },
    async close() {
      direct.destroy();
      await proxy.close();
      await kill(node);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The app server's store: the client as the store page recommends it (a request timeout that throws). */
export function openDynamoStore(connection: Extract<StoreConnection, { kind: 'dynamodb' }>): {
  readonly store: Store;
  close(): Promise<void>;
} {
  const client = new DynamoDBClient({
    endpoint: connection.endpoint,
    region: REGION,
    credentials: CREDENTIALS,
    requestHandler: { requestTimeout: 1_000, throwOnRequestTimeout: true },
  });
  return {
    store: new DynamoDbStore({ client, table: connection.table }),
    close: async () => client.destroy(),
  };
}
