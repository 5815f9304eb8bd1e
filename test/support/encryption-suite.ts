/**
 * Encryption at rest, one test body for every store (memory, Redis, PostgreSQL): what is at rest holds no plaintext,
 * replays are byte-identical, and every record the engine cannot vouch for (tampered, copied under another key,
 * sealed under a removed key, stored in clear) refuses the request without running the handler again.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  type EncryptionOptions,
  Engine,
  type EngineOptions,
  isRecordUnreadableError,
  type Outcome,
  type RecordUnreadableError,
  type Store,
} from '../../src/index.js';

/** How a test reaches a store's bytes at rest, below the Store contract. */
export interface AtRest<S extends Store = Store> {
  readonly name: string;
  /** A fresh store (its own prefix, schema or instance). */
  store(): S;
  /** Everything stored for the record of `key`, as bytes (the Redis value, the PostgreSQL row). */
  raw(store: S, key: string): Promise<Buffer>;
  /** Copies the record of `from` as it is, bytes and all, to `to` (an attacker with write access). */
  copy(store: S, from: string, to: string): Promise<void>;
  /** Flips one bit of the sealed bytes of `key`'s record, leaving its length and everything else alone. */
  tamper(store: S, key: string): Promise<void>;
  /** Extra engine options (PostgreSQL's transactional view, for instance). */
  readonly engineOptions?: (store: S) => Partial<EngineOptions>;
}

export const keyA = { id: 'a-2026-01', key: randomBytes(32) };
export const keyB = { id: 'b-2026-06', key: randomBytes(32).toString('base64') };

/** A response with something personal in every part: the status, a `Location` with an id, a custom header, the body. */
export function personalResponse(marker: string): Outcome {
  return {
    status: 201,
    headers: [
      ['content-type', 'application/json'],
      ['location', `/customers/${marker}-loc`],
      ['x-customer-email', `${marker}@example.com`],
    ],
    // Over the compression threshold, with bytes that are not UTF-8: the replay must give these back exactly.
    body: Buffer.concat([
      Buffer.from(JSON.stringify({ iban: `${marker}-iban`, note: 'x'.repeat(2_000) })),
      Buffer.from([0xff, 0x00, 0xc1]),
    ]),
  };
}

export function runEncryptionAtRest<S extends Store>(target: AtRest<S>): void {
  describe(`encryption at rest: ${target.name}`, () => {
    const engineFor = (store: S, encryption?: EncryptionOptions) =>
      new Engine({
        store,
        ...target.engineOptions?.(store),
        ...(encryption === undefined ? {} : { encryption }),
      });
    /** Runs `key` through the engine once; counts handler runs in `runs`. */
    async function call(engine: Engine, key: string, response: Outcome, runs: { count: number }) {
      return engine.execute({
        key,
        fingerprint: 'f',
        run: async () => {
          runs.count++;
          return response;
        },
        settle: (outcome) => ({ keep: true, outcome }),
      });
    }
    async function refused(promise: Promise<unknown>): Promise<RecordUnreadableError> {
      const error = await promise.then(
        () => undefined,
        (e: unknown) => e,
      );
      if (!isRecordUnreadableError(error))
        throw new Error(`expected RecordUnreadableError, got ${String(error)}`);
      return error;
    }

    it('keeps no plaintext at rest, and replays status, headers and body byte for byte', async () => {
      const store = target.store();
      const engine = engineFor(store, { keys: [keyA] });
      const marker = randomUUID();
      const response = personalResponse(marker);
      const runs = { count: 0 };
      const key = `k-${randomUUID()}`;
      await call(engine, key, response, runs);
      const raw = await target.raw(store, key);
      for (const secret of [marker, 'iban', 'x-customer-email', '/customers/', 'xxxxxxxx', 'content-type'])
        expect(raw.includes(secret), `${secret} at rest`).toBe(false);
      // The key id is the one thing about the key that is in clear: it says which key opens the record.
      expect(raw.includes(keyA.id)).toBe(true);
      const replay = await call(engine, key, response, runs);
      expect(runs.count).toBe(1);
      if (replay.kind !== 'replayed' || !replay.outcome.retained) throw new Error('expected a replay');
      expect(replay.outcome.outcome.status).toBe(201);
      expect(replay.outcome.outcome.headers).toEqual(response.headers);
      expect(Buffer.from(replay.outcome.outcome.body).equals(Buffer.from(response.body))).toBe(true);
      // Inspection goes through the same wrapper: the engine shows the record opened.
      const record = await engine.inspect(key);
      expect(record?.outcome?.status).toBe(201);
    });

    it('refuses a tampered record, and the handler stays at one run', async () => {
      const store = target.store();
      const engine = engineFor(store, { keys: [keyA] });
      const runs = { count: 0 };
      const key = `k-${randomUUID()}`;
      await call(engine, key, personalResponse('t'), runs);
      await target.tamper(store, key);
      const error = await refused(call(engine, key, personalResponse('t'), runs));
      expect(error.reason).toBe('unauthentic');
      await refused(engine.inspect(key));
      expect(runs.count).toBe(1);
    });

    it('refuses a record copied under another key (the storage key is authenticated data)', async () => {
      const store = target.store();
      const engine = engineFor(store, { keys: [keyA] });
      const runs = { count: 0 };
      const original = `k-${randomUUID()}`;
      const copy = `k-${randomUUID()}`;
      await call(engine, original, personalResponse('c'), runs);
      await target.copy(store, original, copy);
      const error = await refused(call(engine, copy, personalResponse('c'), runs));
      expect(error.reason).toBe('unauthentic');
      expect(runs.count).toBe(1);
      // The original still opens where it belongs.
      expect((await call(engine, original, personalResponse('c'), runs)).kind).toBe('replayed');
    });

    it('opens records sealed under key A after rotation to [B, A], and refuses them under [B] alone', async () => {
      const store = target.store();
      const runs = { count: 0 };
      const key = `k-${randomUUID()}`;
      const response = personalResponse('r');
      await call(engineFor(store, { keys: [keyA] }), key, response, runs);
      const rotated = engineFor(store, { keys: [keyB, keyA] });
      const replay = await call(rotated, key, response, runs);
      if (replay.kind !== 'replayed' || !replay.outcome.retained) throw new Error('expected a replay');
      expect(Buffer.from(replay.outcome.outcome.body).equals(Buffer.from(response.body))).toBe(true);
      // New records are sealed under the newest key.
      const fresh = `k-${randomUUID()}`;
      await call(rotated, fresh, response, runs);
      expect((await target.raw(store, fresh)).includes(keyB.id)).toBe(true);
      const error = await refused(call(engineFor(store, { keys: [keyB] }), key, response, runs));
      expect(error.reason).toBe('unknown-key');
      expect(error.keyId).toBe(keyA.id);
      expect(runs.count).toBe(2);
    });

    it('refuses a sealed record in an engine without the option, instead of replaying ciphertext', async () => {
      const store = target.store();
      const runs = { count: 0 };
      const key = `k-${randomUUID()}`;
      await call(engineFor(store, { keys: [keyA] }), key, personalResponse('n'), runs);
      const error = await refused(call(engineFor(store), key, personalResponse('n'), runs));
      expect(error.reason).toBe('unknown-key');
      expect(error.keyId).toBe(keyA.id);
      expect(runs.count).toBe(1);
    });

    it('refuses a record stored in clear unless allowPlaintext is on', async () => {
      const store = target.store();
      const runs = { count: 0 };
      const key = `k-${randomUUID()}`;
      const response = personalResponse('p');
      await call(engineFor(store), key, response, runs);
      const error = await refused(call(engineFor(store, { keys: [keyA] }), key, response, runs));
      expect(error.reason).toBe('plaintext');
      const migrating = engineFor(store, { keys: [keyA], allowPlaintext: true });
      const replay = await call(migrating, key, response, runs);
      if (replay.kind !== 'replayed' || !replay.outcome.retained) throw new Error('expected a replay');
      expect(Buffer.from(replay.outcome.outcome.body).equals(Buffer.from(response.body))).toBe(true);
      expect(runs.count).toBe(1);
    });
  });
}
