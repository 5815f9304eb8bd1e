import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EncryptedStore } from '../../src/core/encrypted-store.js';
import { resolveEncryption } from '../../src/core/encryption-keys.js';
import { decryptOutcome, encryptOutcome, sealedKeyId } from '../../src/core/outcome-cipher.js';
import {
  type EncryptionOptions,
  Engine,
  Inbox,
  idempotent,
  isInvalidOptionsError,
  isRecordUnreadableError,
  MemoryStore,
  type RecordUnreadableError,
  type Store,
} from '../../src/index.js';
import type { StoredOutcome } from '../../src/store.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { over } from './faulty-store.js';

const A = { id: 'a', key: randomBytes(32) };
const B = { id: 'b', key: randomBytes(32) };
const outcome: StoredOutcome = {
  status: 201,
  headers: [
    ['location', '/customers/42'],
    ['x-note', 'caf\u00e9'],
  ],
  body: Buffer.from('{"iban":"DE89370400440532013000"}'),
  encoding: 'identity',
  storage: 'inline',
};

function unreadable(run: () => unknown): RecordUnreadableError {
  try {
    run();
  } catch (error) {
    if (isRecordUnreadableError(error)) return error;
    throw error;
  }
  throw new Error('expected RecordUnreadableError');
}

describe('encryption option', () => {
  it('is checked at construction, with a message that names the entry and never the key', () => {
    const secret = randomBytes(16);
    const bad: [unknown, RegExp][] = [
      [null, /must be an object/],
      [{}, /at least one key/],
      [{ keys: [] }, /at least one key/],
      [{ keys: [A], allowPlaintext: 'yes' }, /allowPlaintext must be a boolean/],
      [{ keys: [A], rotate: true }, /unknown option "rotate"/],
      [
        { keys: [{ id: 'short', key: secret }] },
        /keys\[0\] \(id "short"\): the key must be 32 bytes \(AES-256\), got 16/,
      ],
      [{ keys: [A, { id: 'long', key: randomBytes(33) }] }, /keys\[1\] \(id "long"\).*got 33/],
      [{ keys: [{ id: 'b64', key: secret.toString('base64') }] }, /base64 of 44 characters/],
      [{ keys: [{ id: 'url', key: Buffer.alloc(32, 0xfb).toString('base64url') }] }, /base64 of 44/],
      [{ keys: [{ id: 'num', key: 5 }] }, /must be a Buffer, a Uint8Array or a base64 string/],
      [{ keys: [{ id: '', key: A.key }] }, /keys\[0\]\.id must be 1-64 characters/],
      [{ keys: [{ id: 'has space', key: A.key }] }, /keys\[0\]\.id/],
      [{ keys: [{ id: 'x'.repeat(65), key: A.key }] }, /keys\[0\]\.id/],
      [{ keys: [{ key: A.key }] }, /keys\[0\]\.id/],
      [{ keys: [A, { id: 'a', key: B.key }] }, /keys\[1\]: the id "a" is listed twice/],
      [{ keys: [{ ...A, extra: 1 }] }, /unknown option "extra"/],
    ];
    for (const [encryption, message] of bad) {
      let thrown: unknown;
      try {
        new Engine({ store: new MemoryStore(), encryption: encryption as EncryptionOptions });
      } catch (error) {
        thrown = error;
      }
      expect(isInvalidOptionsError(thrown), String(message)).toBe(true);
      expect((thrown as Error).message).toMatch(message);
      expect((thrown as Error).message).not.toContain(secret.toString('base64'));
    }
  });

  it('takes keys as Buffer, Uint8Array or base64, and the first one seals', () => {
    const raw = randomBytes(32);
    const resolved = resolveEncryption({
      keys: [
        { id: 'b64', key: raw.toString('base64') },
        { id: 'u8', key: new Uint8Array(randomBytes(32)) },
      ],
    });
    expect(resolved.sealing.id).toBe('b64');
    expect(resolved.sealing.secret.export().equals(raw)).toBe(true);
    expect([...resolved.opening.keys()]).toEqual(['b64', 'u8']);
    expect(resolved.allowPlaintext).toBe(false);
  });

  it('copies the key bytes: a caller that zeroes its buffer afterwards changes nothing', () => {
    const key = randomBytes(32);
    const sealing = resolveEncryption({ keys: [{ id: 'k', key: Buffer.from(key) }] });
    const sealed = encryptOutcome(outcome, 'key-1', sealing);
    const given = Buffer.from(key);
    const opening = resolveEncryption({ keys: [{ id: 'k', key: given }] });
    given.fill(0);
    expect(decryptOutcome(sealed, 'key-1', opening)).toEqual(outcome);
  });
});

describe('sealed outcome format', () => {
  const encryption = resolveEncryption({ keys: [A, B] });

  it('shows nothing in clear but the magic byte, the format version and the key id', () => {
    const sealed = encryptOutcome(outcome, 'key-1', encryption);
    expect(sealed).toMatchObject({ status: 0, headers: [], encoding: 'identity', storage: 'inline' });
    const body = Buffer.from(sealed.body);
    expect([...body.subarray(0, 4)]).toEqual([0xc1, 1, 1, 'a'.charCodeAt(0)]);
    // Header, IV, ciphertext as long as the plaintext envelope (7 + headers + body), GCM tag.
    const plaintext = 7 + (4 + 8 + 4 + 13) + (4 + 6 + 4 + 5) + outcome.body.byteLength;
    expect(body.length).toBe(4 + 12 + plaintext + 16);
    expect(body.includes('DE89')).toBe(false);
    expect(decryptOutcome(sealed, 'key-1', encryption)).toEqual(outcome);
  });

  it('draws a fresh IV for every record: the same outcome never seals to the same bytes', () => {
    const ivs = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const body = Buffer.from(encryptOutcome(outcome, 'key-1', encryption).body);
      ivs.add(body.subarray(4, 16).toString('hex'));
    }
    expect(ivs.size).toBe(100);
  });

  it('binds the storage key and the key id: a record relabelled or moved does not open', () => {
    const sealed = encryptOutcome(outcome, 'key-1', encryption);
    expect(unreadable(() => decryptOutcome(sealed, 'key-2', encryption)).reason).toBe('unauthentic');
    // The id byte says "b", a key that is listed: the AAD still holds "a", so it does not authenticate.
    const relabelled = Buffer.from(sealed.body);
    relabelled[3] = 'b'.charCodeAt(0);
    const error = unreadable(() => decryptOutcome({ ...sealed, body: relabelled }, 'key-1', encryption));
    expect(error.reason).toBe('unauthentic');
    expect(error.keyId).toBe('b');
    // Even where one key's bytes are listed under two ids, the id a record names is the id that sealed it.
    const twice = resolveEncryption({ keys: [A, { id: 'b', key: A.key }] });
    const underA = encryptOutcome(outcome, 'key-1', twice);
    const renamed = Buffer.from(underA.body);
    renamed[3] = 'b'.charCodeAt(0);
    expect(unreadable(() => decryptOutcome({ ...underA, body: renamed }, 'key-1', twice)).reason).toBe(
      'unauthentic',
    );
  });

  it('refuses every altered byte, a truncated record and an unknown format version', () => {
    const sealed = encryptOutcome(outcome, 'key-1', encryption);
    const bytes = Buffer.from(sealed.body);
    for (let at = 4; at < bytes.length; at++) {
      const altered = Buffer.from(bytes);
      altered[at]! ^= 0x80;
      expect(unreadable(() => decryptOutcome({ ...sealed, body: altered }, 'key-1', encryption)).reason).toBe(
        'unauthentic',
      );
    }
    const truncated = { ...sealed, body: bytes.subarray(0, 20) };
    expect(unreadable(() => decryptOutcome(truncated, 'key-1', encryption)).reason).toBe('malformed');
    const version2 = Buffer.from(bytes);
    version2[1] = 2;
    expect(unreadable(() => decryptOutcome({ ...sealed, body: version2 }, 'key-1', encryption)).reason).toBe(
      'malformed',
    );
  });

  it('refuses a record sealed under a key that is not listed, naming its id', () => {
    const sealed = encryptOutcome(
      outcome,
      'key-1',
      resolveEncryption({ keys: [{ id: 'gone', key: A.key }] }),
    );
    const error = unreadable(() => decryptOutcome(sealed, 'key-1', encryption));
    expect(error.reason).toBe('unknown-key');
    expect(error.keyId).toBe('gone');
    expect(error.code).toBe('ONCELY_RECORD_UNREADABLE');
  });

  it('passes an outcome in clear only with allowPlaintext', () => {
    expect(unreadable(() => decryptOutcome(outcome, 'key-1', encryption)).reason).toBe('plaintext');
    const migrating = resolveEncryption({ keys: [A], allowPlaintext: true });
    expect(decryptOutcome(outcome, 'key-1', migrating)).toBe(outcome);
    // A clear status-0 outcome whose body is JSON (idempotent(), the inbox) can never start with the magic byte.
    const clearResult: StoredOutcome = { ...outcome, status: 0, headers: [], body: Buffer.from('{"ok":1}') };
    expect(decryptOutcome(clearResult, 'key-1', migrating)).toBe(clearResult);
  });

  it('tells a sealed record from a result in clear by its whole shape', () => {
    expect(sealedKeyId(encryptOutcome(outcome, 'k', encryption))).toBe('a');
    const clear = (bytes: number[]): StoredOutcome => ({
      ...outcome,
      status: 0,
      headers: [],
      body: Buffer.from(bytes),
    });
    // A CBOR date (tag 1) starts with 0xC1 too; so may a result of a codec of the user's own.
    expect(sealedKeyId(clear([0xc1, 0x1a, 0x65, 0x00, 0x00, 0x00]))).toBeUndefined();
    expect(sealedKeyId(clear([0xc1, 1, 1, 0x20, ...new Array(40).fill(0)]))).toBeUndefined();
    expect(sealedKeyId(clear([0xc1, 1, 0, ...new Array(40).fill(0)]))).toBeUndefined();
    expect(sealedKeyId({ ...encryptOutcome(outcome, 'k', encryption), status: 200 })).toBeUndefined();
  });

  it('keeps compressed and blob-pointer outcomes as they were (the engine opens them after)', () => {
    for (const stored of [
      { ...outcome, encoding: 'br', storage: 'inline' },
      { ...outcome, encoding: 'identity', storage: 'blob', body: Buffer.from('s3://bucket/ref') },
      { ...outcome, encoding: 'identity', storage: 'omitted', body: new Uint8Array(0) },
      { ...outcome, headers: [], body: new Uint8Array(0) },
    ] as const satisfies readonly StoredOutcome[]) {
      const opened = decryptOutcome(encryptOutcome(stored, 'k', encryption), 'k', encryption);
      expect({ ...opened, body: Buffer.from(opened.body) }).toEqual({
        ...stored,
        body: Buffer.from(stored.body),
      });
    }
  });
});

describe('EncryptedStore', () => {
  const encryption = resolveEncryption({ keys: [A] });

  it("is the inner store's name and endpoint, and has an optional method only when the inner store has it", async () => {
    const memory = new MemoryStore();
    const bare = new EncryptedStore(over(memory, 'bare', {}), encryption);
    expect(bare.name).toBe('bare');
    expect(bare.endpoint).toBeUndefined();
    for (const method of ['waitFor', 'stats', 'purgeExpired', 'close', 'beginTransaction'] as const)
      expect(method in bare, method).toBe(false);
    const endpoint = { system: 'redis', address: '127.0.0.1', port: 6379 };
    const calls: string[] = [];
    const full: Store = {
      ...over(memory, 'full', {}),
      endpoint,
      waitFor: async () => calls.push('waitFor') > 0,
      stats: async () => ({ records: calls.push('stats') + 5 }),
      purgeExpired: async () => calls.push('purgeExpired'),
      close: async () => void calls.push('close'),
    };
    const wrapped = new EncryptedStore(full, encryption);
    expect(wrapped.endpoint).toBe(endpoint);
    expect(await wrapped.waitFor!('k', { timeoutMs: 1 })).toBe(true);
    expect(await wrapped.stats!()).toEqual({ records: 7 });
    expect(await wrapped.purgeExpired!()).toBe(3);
    await wrapped.close!();
    expect(calls).toEqual(['waitFor', 'stats', 'purgeExpired', 'close']);
  });

  it('is what the engine stores through, and what idempotent() and the inbox get from the same option', async () => {
    const memory = new MemoryStore();
    const engine = new Engine({ store: memory, encryption: { keys: [A] } });
    expect(engine.store).toBeInstanceOf(EncryptedStore);
    const charge = idempotent(async (order: { id: string }) => ({ paid: order.id }), {
      store: memory,
      key: (order) => order.id,
      scope: 'charge',
      encryption: { keys: [A] },
    });
    expect(await charge({ id: 'o-1' })).toEqual({ paid: 'o-1' });
    const inbox = new Inbox(async (message: { id: string }) => `shipped ${message.id}`, {
      store: memory,
      messageId: (message) => message.id,
      encryption: { keys: [A] },
    });
    expect(await inbox.handle({ id: 'm-1' })).toMatchObject({ kind: 'processed' });
    expect(await inbox.handle({ id: 'm-1' })).toEqual({ kind: 'duplicate', result: 'shipped m-1' });
    const record = await memory.get(inbox.keyOf('m-1'));
    expect(record?.outcome?.body[0]).toBe(0xc1);
    // Without the key, the inbox refuses the duplicate instead of handling it again.
    const handled: string[] = [];
    const keyless = new Inbox(async (message: { id: string }) => void handled.push(message.id), {
      store: memory,
      messageId: (message) => message.id,
      encryption: { keys: [B] },
    });
    const refused = await keyless.handle({ id: 'm-1' });
    expect(refused.kind).toBe('failed');
    expect(isRecordUnreadableError((refused as { error: unknown }).error)).toBe(true);
    expect(handled).toEqual([]);
  });
});

describe('oncely’s own marks under encryption', () => {
  it('a parked message stays findable by its mark, and a mark in clear opens without allowPlaintext', async () => {
    const memory = new MemoryStore();
    const inbox = new Inbox(
      async (_message: { id: string }) => {
        throw new Error('the warehouse is down');
      },
      { store: memory, messageId: (message) => message.id, maxAttempts: 1, encryption: { keys: [A] } },
    );
    expect(await inbox.handle({ id: 'm-poison' })).toMatchObject({ kind: 'failed' });
    expect(await inbox.handle({ id: 'm-poison' })).toMatchObject({ kind: 'parked' });
    // The dashboard's parked panel reads the store as it is, through its inspector's mark.
    const survey = await memory.inspector.survey({
      limit: 10,
      scanLimit: 1_000,
      mark: { fingerprint: 'inbox-message', header: ['oncely-inbox', 'parked'] },
    });
    expect(survey.marked?.count).toBe(1);
    // And the mark reads back through the engine, with no plaintext allowed for anything else.
    expect(await inbox.handle({ id: 'm-poison' })).toMatchObject({ kind: 'parked' });
    const encryption = resolveEncryption({ keys: [A] });
    const mark: StoredOutcome = {
      ...outcome,
      status: 0,
      headers: [['oncely-inbox', 'parked']],
      body: new Uint8Array(0),
    };
    expect(decryptOutcome(mark, 'k', encryption)).toBe(mark);
    const withBody: StoredOutcome = { ...mark, body: new Uint8Array([1]) };
    expect(() => decryptOutcome(withBody, 'k', encryption)).toThrow(/not encrypted/);
    const otherHeader: StoredOutcome = { ...mark, headers: [['oncely-inbox', 'shipped']] };
    expect(() => decryptOutcome(otherHeader, 'k', encryption)).toThrow(/not encrypted/);
  });
});

// The whole Store contract through the wrapper: it must change nothing a store promises.
runStoreConformance({
  name: 'EncryptedStore over MemoryStore',
  harness: { describe, it },
  createStore: ({ clock }) =>
    new EncryptedStore(new MemoryStore({ clock }), resolveEncryption({ keys: [A] })),
  stormSize: 200,
  propertyRuns: 30,
});
