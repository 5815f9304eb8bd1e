import { MemoryStore, type Store } from '../../src/index.js';
import type { StoredOutcome } from '../../src/store.js';
import { runEncryptionAtRest } from '../support/encryption-suite.js';

// The memory store keeps the outcome objects it is given, so "at rest" is the record its own `get` returns, and
// the copy and the tampering go through the Store contract (an attacker with the process's memory).
const LEASE = { leaseMs: 10_000, retentionMs: 60_000 };

async function stored(store: Store, key: string) {
  const record = await store.get(key);
  if (record?.outcome === undefined) throw new Error(`no completed record at ${key}`);
  return { record, outcome: record.outcome };
}

/** Stores `outcome` with `body` as `key`'s completed record. */
async function put(store: Store, key: string, fingerprint: string, outcome: StoredOutcome, body: Uint8Array) {
  const begun = await store.begin({ key, fingerprint, ...LEASE });
  if (begun.kind !== 'acquired') throw new Error(`could not claim ${key}: ${begun.kind}`);
  await store.complete({
    key,
    token: begun.token,
    retentionMs: LEASE.retentionMs,
    outcome: { ...outcome, body },
  });
}

runEncryptionAtRest<MemoryStore>({
  name: 'MemoryStore',
  store: () => new MemoryStore(),
  raw: async (store, key) => {
    const { record, outcome } = await stored(store, key);
    const clear = JSON.stringify({ ...record, outcome: { ...outcome, body: undefined } });
    return Buffer.concat([Buffer.from(clear), outcome.body]);
  },
  copy: async (store, from, to) => {
    const { record, outcome } = await stored(store, from);
    await put(store, to, record.fingerprint, outcome, outcome.body);
  },
  tamper: async (store, key) => {
    const { record, outcome } = await stored(store, key);
    const body = Buffer.from(outcome.body);
    body[body.length >> 1]! ^= 1;
    await store.delete(key);
    await put(store, key, record.fingerprint, outcome, body);
  },
});
