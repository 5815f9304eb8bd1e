/**
 * Test (dashboard): `source: { store }` takes any store with an inspector: here a MemoryStore, whose records the
 * dashboard knows nothing of. Keys and parked panels, the lookup, the body on request and the delete action all
 * go through `store.inspector` and the Store contract; a store without an inspector is refused at construction.
 */
import { describe, expect, it } from 'vitest';
import { dashboard } from '../../src/dashboard/index.js';
import type { KeyBody, KeyDetail, Snapshot } from '../../src/dashboard/model.js';
import { MemoryStore } from '../../src/index.js';
import { scopedKey } from '../../src/store.js';

const TOKEN = 'a-token-of-sixteen-chars';
const lease = { leaseMs: 60_000, retentionMs: 600_000 };
const get = async <T>(board: ReturnType<typeof dashboard>, path: string) =>
  (await (await board.fetch(new Request(`http://127.0.0.1${path}`))).json()) as T;

describe('source: { store }', () => {
  it('reads any store through its inspector: panels, lookup, body on request, delete', async () => {
    const store = new MemoryStore();
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
    expect(snapshot.store).toEqual({ kind: 'memory', label: 'memory' });
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
    await store.close();
  });

  it('refuses a store without an inspector at construction', () => {
    const store = new MemoryStore();
    const bare = { ...store, name: 'bare', inspector: undefined, begin: store.begin.bind(store) };
    expect(() => dashboard({ source: { store: bare as unknown as MemoryStore } })).toThrow(/inspector/);
  });
});
