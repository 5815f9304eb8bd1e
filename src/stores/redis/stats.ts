import type { Redis } from 'ioredis';
import type { StoreStats } from '../../core/store.js';
import { escapeGlob, type KeyLayout } from './keys.js';
import { isCluster, type RedisClient } from './scripts.js';

/** `StoreStats` plus what a bounded SCAN can tell. */
export interface RedisStoreStats extends StoreStats {
  /** Records past their retention that Redis has not evicted yet (not counted in `records`). */
  readonly expired: number;
  /** True when `statsScanLimit` keys were inspected before the SCAN finished: the counts are a lower bound. */
  readonly truncated: boolean;
}

const SCAN_COUNT = 500;

/**
 * Counts records by state with SCAN over the prefix (on every master of a Cluster), a pipelined HMGET and
 * MEMORY USAGE per batch; never KEYS, and never more than `limit` keys, so it is safe on a busy server.
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
  let seen = 0;
  let truncated = false;
  for (const node of nodes) {
    const now = clock?.() ?? (await serverTime(node));
    let cursor = '0';
    do {
      const [next, found] = await node.scan(
        cursor,
        'MATCH',
        `${escapeGlob(keyPrefix)}${layout.scanPattern}`,
        'COUNT',
        SCAN_COUNT,
      );
      cursor = next;
      const keys = found.slice(0, limit - seen).map((k) => k.slice(keyPrefix.length));
      seen += keys.length;
      if (keys.length > 0) tally(counts, await inspect(node, keys), now);
      if (seen >= limit && (cursor !== '0' || keys.length < found.length)) truncated = true;
    } while (cursor !== '0' && !truncated);
    if (truncated) break;
  }
  return { ...counts, truncated };
}

type Inspected = Array<[state: string | null, expiresAt: string | null, bytes: number | null]>;

async function inspect(node: Redis, keys: readonly string[]): Promise<Inspected> {
  const pipeline = node.pipeline();
  for (const key of keys) {
    pipeline.hmget(key, 's', 'e');
    pipeline.memory('USAGE', key, 'SAMPLES', '0');
  }
  const replies = (await pipeline.exec()) ?? [];
  return keys.map((_, i) => {
    const fields = replies[2 * i]?.[1] as [string | null, string | null] | undefined;
    const bytes = replies[2 * i + 1]?.[1];
    return [fields?.[0] ?? null, fields?.[1] ?? null, typeof bytes === 'number' ? bytes : null];
  });
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
    if (state === null) continue; // removed between SCAN and HMGET
    if (expiresAt === null || Number(expiresAt) <= now) {
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
