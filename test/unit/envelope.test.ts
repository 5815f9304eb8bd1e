import { randomBytes } from 'node:crypto';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  type BlobStore,
  Engine,
  isCorruptRecordError,
  isInvalidOptionsError,
  jsonCodec,
  MemoryStore,
  type OpenedOutcome,
  type Outcome,
  structuredCodec,
} from '../../src/index.js';
import { sealOutcome } from '../../src/store.js';

// What a completed outcome becomes in the store and what a replay gets back: compression from a size on, the
// blob store past the cap (or "not retained" without one), and bodies that cannot be decoded reported as corrupt.
const text = (n: number) => Buffer.from('{"pad":"'.padEnd(n - 2, 'a').concat('"}'));
const random = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 7919 + 13) % 251));
// Incompressible: brotli makes it larger, so it is kept as it is.
const noise = randomBytes(400);

function blobs(): BlobStore & { readonly kept: Map<string, Uint8Array>; gets: number } {
  const kept = new Map<string, Uint8Array>();
  return {
    kept,
    gets: 0,
    async put(key, body) {
      kept.set(`blob:${key}`, body);
      return `blob:${key}`;
    },
    async get(reference) {
      this.gets++;
      return kept.get(reference);
    },
  };
}

async function completeWith(engine: Engine, key: string, body: Uint8Array) {
  const begun = await engine.begin({ key, fingerprint: 'f' });
  if (begun.kind !== 'acquired') throw new Error(begun.kind);
  const outcome: Outcome = { status: 201, headers: [['content-type', 'application/json']], body };
  await begun.claim.complete(outcome);
}

async function replayOf(engine: Engine, key: string): Promise<OpenedOutcome> {
  const begun = await engine.begin({ key, fingerprint: 'f' });
  if (begun.kind !== 'replay') throw new Error(`expected a replay, got ${begun.kind}`);
  return begun.outcome;
}

describe('stored outcomes', () => {
  it('are compressed with brotli from compressAboveBytes on, unless that does not make them smaller', async () => {
    const store = new MemoryStore();
    const engine = new Engine({ store, compressAboveBytes: 100 });
    await completeWith(engine, 'below', text(99));
    await completeWith(engine, 'at', text(100));
    await completeWith(engine, 'incompressible', noise);
    const stored = async (key: string) => (await store.get(key))?.outcome;
    expect(await stored('below')).toMatchObject({ encoding: 'identity', storage: 'inline' });
    expect(await stored('at')).toMatchObject({ encoding: 'br', storage: 'inline' });
    expect((await stored('at'))!.body.byteLength).toBeLessThan(100);
    expect(await stored('incompressible')).toMatchObject({ encoding: 'identity', storage: 'inline' });
    for (const [key, body] of [
      ['below', text(99)],
      ['at', text(100)],
      ['incompressible', noise],
    ] as const) {
      const replay = await replayOf(engine, key);
      expect(replay.retained && Buffer.from(replay.outcome.body).equals(body)).toBe(true);
    }
  });

  it('up to maxBodyBytes stay inline; above it they go to the blob store, which a replay reads back', async () => {
    const store = new MemoryStore();
    const blob = blobs();
    const engine = new Engine({ store, maxBodyBytes: 1_000, compressAboveBytes: 10_000, blobStore: blob });
    await completeWith(engine, 'at-cap', random(1_000));
    await completeWith(engine, 'over', random(1_001));
    expect((await store.get('at-cap'))?.outcome).toMatchObject({ storage: 'inline', encoding: 'identity' });
    const over = (await store.get('over'))?.outcome;
    expect(over).toMatchObject({ storage: 'blob', encoding: 'identity', status: 201 });
    expect(Buffer.from(over!.body).toString('utf8')).toBe('blob:over');
    expect(blob.kept.size).toBe(1);
    const replay = await replayOf(engine, 'over');
    expect(replay.retained && Buffer.from(replay.outcome.body).equals(random(1_001))).toBe(true);
    expect(blob.gets).toBe(1);
    expect(await replayOf(engine, 'at-cap')).toMatchObject({ retained: true });
    expect(blob.gets).toBe(1);
  });

  it('are "not retained" when their blob is gone, or when the replaying engine has no blob store', async () => {
    const store = new MemoryStore();
    const blob = blobs();
    const writer = new Engine({ store, maxBodyBytes: 10, blobStore: blob });
    await completeWith(writer, 'k', random(50));
    const reader = new Engine({ store, maxBodyBytes: 10 });
    const headers = [['content-type', 'application/json']];
    expect(await replayOf(reader, 'k')).toEqual({ retained: false, status: 201, headers });
    blob.kept.clear();
    expect(await replayOf(writer, 'k')).toEqual({ retained: false, status: 201, headers });
  });

  it('without a blob store, a body over the cap is recorded as completed but not retained', async () => {
    const store = new MemoryStore();
    const engine = new Engine({ store, maxBodyBytes: 10 });
    await completeWith(engine, 'k', random(11));
    expect((await store.get('k'))?.outcome).toMatchObject({ storage: 'omitted', body: new Uint8Array(0) });
    expect(await replayOf(engine, 'k')).toMatchObject({ retained: false, status: 201 });
  });

  it('replay gzip bodies other writers stored, and report a body that does not decompress as corrupt', async () => {
    const store = new MemoryStore();
    const engine = new Engine({ store });
    const write = async (key: string, body: Uint8Array, encoding: 'gzip' | 'br') => {
      const begun = await store.begin({ key, fingerprint: 'f', leaseMs: 1_000, retentionMs: 60_000 });
      if (begun.kind !== 'acquired') throw new Error(begun.kind);
      const outcome = { status: 200, headers: [], body, encoding, storage: 'inline' } as const;
      await store.complete({ key, token: begun.token, outcome, retentionMs: 60_000 });
    };
    await write('gzip', gzipSync(Buffer.from('zipped')), 'gzip');
    await write('broken', Buffer.from('not brotli at all'), 'br');
    await write('brotli', brotliCompressSync(Buffer.from('squeezed')), 'br');
    const gzip = await replayOf(engine, 'gzip');
    expect(gzip.retained && Buffer.from(gzip.outcome.body).toString()).toBe('zipped');
    const brotli = await replayOf(engine, 'brotli');
    expect(brotli.retained && Buffer.from(brotli.outcome.body).toString()).toBe('squeezed');
    const corrupt = await engine.begin({ key: 'broken', fingerprint: 'f' }).catch((error: unknown) => error);
    expect(isCorruptRecordError(corrupt)).toBe(true);
    // The decompressor's own error stays inspectable as the cause.
    expect((corrupt as Error).cause).toBeInstanceOf(Error);
  });

  it('sealOutcome (for store authors) keeps a body under the cap inline, even with a blob store', async () => {
    const blob = blobs();
    const options = { compressAboveBytes: 10_000, maxBodyBytes: 100, blobStore: blob };
    const small = await sealOutcome('k', { status: 200, headers: [], body: random(100) }, options);
    expect(small).toMatchObject({ storage: 'inline', encoding: 'identity' });
    expect(blob.kept.size).toBe(0);
    const large = await sealOutcome('k', { status: 200, headers: [], body: random(101) }, options);
    expect(large).toMatchObject({ storage: 'blob', encoding: 'identity' });
    expect(Buffer.from(large.body).toString('utf8')).toBe('blob:k');
    const omitted = await sealOutcome(
      'k',
      { status: 200, headers: [], body: random(101) },
      {
        ...options,
        blobStore: undefined,
      },
    );
    expect(omitted).toMatchObject({ storage: 'omitted', encoding: 'identity', body: new Uint8Array(0) });
  });
});

describe('codecs', () => {
  it('json: undefined is stored as null; bytes that are not JSON are a corrupt record', () => {
    expect(Buffer.from(jsonCodec.encode(undefined)).toString()).toBe('null');
    expect(jsonCodec.decode(jsonCodec.encode({ a: [1, 'b'] }))).toEqual({ a: [1, 'b'] });
    expect(() => jsonCodec.decode(Buffer.from('{'))).toThrow(
      expect.objectContaining({ name: 'CorruptRecordError' }),
    );
    try {
      jsonCodec.decode(Buffer.from('{'));
    } catch (error) {
      expect(isCorruptRecordError(error) && error.cause instanceof SyntaxError).toBe(true);
    }
  });

  it('structured: values JSON cannot hold survive; what it cannot encode is refused, garbage is corrupt', () => {
    const value = { when: new Date(0), big: 10n, set: new Set([1]), none: undefined };
    expect(structuredCodec.decode(structuredCodec.encode(value))).toEqual(value);
    expect(() => structuredCodec.encode({ fn: () => 1 })).toThrow(
      expect.objectContaining({ name: 'InvalidOptionsError' }),
    );
    try {
      structuredCodec.encode(Symbol('x'));
    } catch (error) {
      expect(isInvalidOptionsError(error)).toBe(true);
    }
    for (const garbage of [Buffer.from('not devalue'), Buffer.from([0xc3, 0x28])]) {
      let thrown: unknown;
      try {
        structuredCodec.decode(garbage);
      } catch (error) {
        thrown = error;
      }
      expect(isCorruptRecordError(thrown)).toBe(true);
      expect((thrown as Error).cause).toBeDefined();
    }
  });
});
