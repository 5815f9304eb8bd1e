import { Redis } from 'ioredis';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { Engine, InvalidOptionsError, idempotent, MemoryStore } from '../../src/index.js';

// Bad options throw at construction with a message that says what to do; none of these dials a connection.
describe('engine options', () => {
  it('a Redis client passed as the store names the store to wrap it in', () => {
    const client = new Redis({ lazyConnect: true });
    expect(() => new Engine({ store: client as never })).toThrow(/new RedisStore\(\{ client \}\)/);
    client.disconnect();
  });

  it('a pg pool passed as the store names the store to wrap it in', async () => {
    const pool = new pg.Pool();
    expect(() => new Engine({ store: pool as never })).toThrow(/new PostgresStore\(\{ pool \}\)/);
    await pool.end();
  });

  it('retentionMs below leaseMs is refused: the record would expire under a running owner', () => {
    expect(() => new Engine({ store: new MemoryStore(), leaseMs: 5_000, retentionMs: 1_000 })).toThrow(
      InvalidOptionsError,
    );
    expect(() => new Engine({ store: new MemoryStore(), leaseMs: 5_000, retentionMs: 5_000 })).not.toThrow();
  });

  it('idempotent() refuses an unknown option and lists its own option names beside the engine ones', () => {
    const make = () =>
      idempotent(async (order: { id: string }) => order.id, {
        key: (order: { id: string }) => order.id,
        scope: 'options',
        ttl: 1,
      } as never);
    expect(make).toThrow(InvalidOptionsError);
    expect(make).toThrow(/unknown option "ttl".*\bkey\b.*\bscope\b.*\bwaitMs\b.*\bleaseMs\b/);
  });
});
