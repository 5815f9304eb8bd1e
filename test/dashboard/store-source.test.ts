/**
 * Test (dashboard): `source: { store }` takes any store with an inspector: a MemoryStore, and a real MySqlStore
 * (MariaDB) and DynamoDbStore (dynalite), whose records the dashboard knows nothing of. Keys and parked panels, the
 * lookup, the body on request and the delete action all go through `store.inspector` and the Store contract; a
 * store without an inspector is refused at construction.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { dashboard } from '../../src/dashboard/index.js';
import type { KeyBody, KeyDetail, Snapshot } from '../../src/dashboard/model.js';
import { MemoryStore } from '../../src/index.js';
import { type Store, scopedKey } from '../../src/store.js';
import { DynamoDbStore } from '../../src/stores/dynamodb/index.js';
import { MySqlStore } from '../../src/stores/mysql/index.js';
import { returnItemOnRefusal, startDynalite } from '../dynamodb/support/dynalite.js';
import { createTestTable } from '../mysql/support.js';
import { requireService } from '../support/services.js';

const TOKEN = 'a-token-of-sixteen-chars';
const lease = { leaseMs: 60_000, retentionMs: 600_000 };
const get = async <T>(board: ReturnType<typeof dashboard>, path: string) =>
  (await (await board.fetch(new Request(`http://127.0.0.1${path}`))).json()) as T;

/** What each case's store needs torn down after the file. */
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Each store on an empty place of its own: a fresh MemoryStore, a new MariaDB table, a dynalite of its own. */
const STORES: readonly { readonly name: string; readonly open: () => Promise<Store> }[] = [
  {
    name: 'memory',
    open: async () => {
      const store = new MemoryStore();
      cleanups.push(() => store.close());
      return store;
    },
  },
  {
    name: 'mysql',
    open: async () => {
      await requireService('mariadb');
      const table = await createTestTable('dashsource', 'mysql2', { size: 2 });
      cleanups.push(() => table.drop());
      return new MySqlStore({ pool: table.pool, table: table.table });
    },
  },
  {
    name: 'dynamodb',
    open: async () => {
      const backend = await startDynalite();
      returnItemOnRefusal(true); // as DynamoDB answers a refused write
      cleanups.push(() => backend.close());
      return new DynamoDbStore({ client: backend.client });
    },
  },
];

describe('source: { store }', () => {
  it.each(STORES)(
    'reads the $name store through its inspector: panels, lookup, body on request, delete',
    async ({ name, open }) => {
      const store = await open();
      const done = scopedKey('POST /payments', 'k-done');
      const running = scopedKey('POST /payments', 'k-running');
      const parked = scopedKey('inbox', 'm-1');
      const first = await store.begin({ key: done, fingerprint: 'f', label: 'POST /payments', ...lease });
      if (first.kind !== 'acquired') throw new Error(first.kind);
      const outcome = {
        status: 201,
        headers: [['content-type', 'application/json']] as const,
        body: Buffer.from('{"id":1}'),
      };
      await store.complete({
        key: done,
        token: first.token,
        outcome: { ...outcome, encoding: 'identity', storage: 'inline' },
        retentionMs: 600_000,
      });
      await store.begin({ key: running, fingerprint: 'f', ...lease });
      const inbox = await store.begin({ key: parked, fingerprint: 'inbox-message', ...lease });
      if (inbox.kind !== 'acquired') throw new Error(inbox.kind);
      await store.complete({
        key: parked,
        token: inbox.token,
        outcome: {
          status: 0,
          headers: [['oncely-inbox', 'parked']],
          body: new Uint8Array(0),
          encoding: 'identity',
          storage: 'inline',
        },
        retentionMs: 600_000,
      });

      const board = dashboard({ source: { store }, token: TOKEN, actions: true });
      const snapshot = await get<Snapshot>(board, '/api/snapshot');
      expect(snapshot.store).toEqual({ kind: name, label: name });
      expect(snapshot.errors).toEqual([]);
      expect(snapshot.keys?.counts).toMatchObject({
        records: 3,
        inProgress: 1,
        completed: 2,
        truncated: false,
      });
      expect(snapshot.keys?.completed.map((row) => row.key)).toContain(done);
      expect(snapshot.keys?.completed.find((row) => row.key === done)).toMatchObject({
        status: 201,
        label: 'POST /payments',
      });
      expect(snapshot.keys?.inProgress.map((row) => row.key)).toEqual([running]);
      expect(snapshot.parked).toMatchObject({ count: 1, rows: [{ key: parked }] });
      expect(snapshot.events).toMatchObject({ available: false });
      expect(snapshot.outbox).toBeNull();

      const detail = await get<KeyDetail>(board, `/api/key?hashed=${done}`);
      expect(detail).toMatchObject({ found: true, outcome: { status: 201, bodyBytes: 8 } });
      expect(JSON.stringify(detail)).not.toContain('"id"');
      expect(await get<KeyBody>(board, `/api/key/body?hashed=${done}`)).toMatchObject({ text: '{"id":1}' });

      const deleted = await board.fetch(
        new Request('http://127.0.0.1/api/actions/delete', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-oncely-token': TOKEN,
            origin: 'http://127.0.0.1',
            host: '127.0.0.1',
          },
          body: JSON.stringify({ key: running }),
        }),
      );
      expect(deleted.status).toBe(200);
      expect(await store.get(running)).toBeUndefined();
    },
  );

  it('refuses a store without an inspector at construction', () => {
    const store = new MemoryStore();
    const bare = { ...store, name: 'bare', inspector: undefined, begin: store.begin.bind(store) };
    expect(() => dashboard({ source: { store: bare as unknown as MemoryStore } })).toThrow(/inspector/);
  });
});
