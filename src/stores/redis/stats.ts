/**
 * @module `RedisStore.stats()`: counts of records by state and their memory, from a SCAN bounded by the keys it
 * walks, so a survey stays safe on a busy server where oncely's keys are few among many.
 */
import type { Redis } from 'ioredis';
import type { StoreStats } from '../../core/store.js';
import { KeyBudget, scanWithin } from './bounded-scan.js';
import { escapeGlob, type KeyLayout } from './keys.js';
import { FIXED, peekHeader } from './record.js';
import { isCluster, type RedisClient } from './scripts.js';

/** `StoreStats` plus what a bounded SCAN can tell. */
export interface RedisStoreStats extends StoreStats {
  /** Records past their retention that Redis has not evicted yet (not counted in `records`). */
  readonly expired: number;
  /** True when the SCAN walked `statsScanLimit` keys (oncely's or not) before it finished: the counts are a lower bound. */
  readonly truncated: boolean;
}

/**
 * Counts records by state with SCAN over the prefix (on every master of a Cluster), a pipelined GETRANGE of each
 * record's fixed header (HMGET for a 0.1 HASH) and MEMORY USAGE per batch; never KEYS, and the SCAN walks no more
 * than `limit` keys in all, so it is safe on a busy server where oncely's records are few among many.
 */
export async function scanStats(
  client: RedisClient,
  layout: KeyLayout,
  clock: (() => number) | undefined,
  limit: number,
): Promise<RedisStoreStats> {
  const nodes: Redis[] = isCluster(client) ? client.nodes('master') : [client];
  const keyPrefix = client.options.keyPrefix ?? '';
  const counts = { records: 0, inProgress: 0, completed: 0, released: 0, bytes: 0, expired: 0 };
  // The bound is on keys walked, oncely's or not (bounded-scan.ts), as the inspector's is.
  const budget = new KeyBudget(limit);
  let truncated = false;
  for (const node of nodes) {
    const now = clock?.() ?? (await serverTime(node));
    const pattern = `${escapeGlob(keyPrefix)}${layout.scanPattern}`;
    const count = async (found: string[]) => {
      tally(
        counts,
        await inspect(
          node,
          found.map((k) => k.slice(keyPrefix.length)),
        ),
        now,
      );
    };
    if (!(await scanWithin(node, pattern, budget, count))) {
      truncated = true;
      break;
    }
  }
  return { ...counts, truncated };
}

type Inspected = Array<[state: string | null, expiresAt: number | null, bytes: number | null]>;

const STATE_LETTERS = { inProgress: 'p', completed: 'c', released: 'r' } as const;

async function inspect(node: Redis, keys: readonly string[]): Promise<Inspected> {
  const pipeline = node.pipeline();
  for (const key of keys) {
    pipeline.getrangeBuffer(key, 0, FIXED - 1);
    pipeline.memory('USAGE', key, 'SAMPLES', '0');
  }
  const replies = (await pipeline.exec()) ?? [];
  const inspected: Inspected = keys.map((_, i) => {
    const [error, header] = replies[2 * i] ?? [];
    const bytes = replies[2 * i + 1]?.[1];
    const usage = typeof bytes === 'number' ? bytes : null;
    // WRONGTYPE: a 0.1 HASH, read below. An empty reply: removed between SCAN and now. Anything else is no record.
    if (error) return [String(error.message).startsWith('WRONGTYPE') ? 'legacy' : null, null, usage];
    const peeked = Buffer.isBuffer(header) ? peekHeader(header) : undefined;
    if (peeked === undefined) return [null, null, usage];
    return [STATE_LETTERS[peeked.state], peeked.expiresAt, usage];
  });
  const legacy = inspected.flatMap(([state], i) => (state === 'legacy' ? [i] : []));
  if (legacy.length > 0) {
    const hashes = node.pipeline();
    for (const i of legacy) hashes.hmget(keys[i]!, 's', 'e');
    const fields = (await hashes.exec()) ?? [];
    legacy.forEach((i, j) => {
      const [s, e] = (fields[j]?.[1] as [string | null, string | null] | undefined) ?? [null, null];
      inspected[i] = [s, e === null ? null : Number(e), inspected[i]![2]];
    });
  }
  return inspected;
}

function tally(
  counts: {
    records: number;
    inProgress: number;
    completed: number;
    released: number;
    bytes: number;
    expired: number;
  },
  inspected: Inspected,
  now: number,
): void {
  for (const [state, expiresAt, bytes] of inspected) {
    if (state === null) continue; // removed between SCAN and the read, or not a record
    if (expiresAt === null || expiresAt <= now) {
      counts.expired++;
      continue;
    }
    counts.records++;
    counts.bytes += bytes ?? 0;
    if (state === 'p') counts.inProgress++;
    else if (state === 'c') counts.completed++;
    else if (state === 'r') counts.released++;
  }
}

async function serverTime(node: Redis): Promise<number> {
  const [seconds, micros] = await node.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}
