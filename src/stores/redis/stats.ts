/**
 * @module `RedisStore.stats()`: counts of records by state and their memory, from a SCAN bounded by the keys it
 * walks, so a survey stays safe on a busy server where oncely's keys are few among many.
 */
import type { StoreStats } from '../../core/store.js';
import { KeyBudget, scanWithin } from './bounded-scan.js';
import { escapeGlob, type KeyLayout } from './keys.js';
import { FIXED, peekHeader } from './record-header.js';
import { type RedisNode, type RedisTransport, timeOf } from './transport.js';

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
  transport: RedisTransport,
  layout: KeyLayout,
  clock: (() => number) | undefined,
  limit: number,
): Promise<RedisStoreStats> {
  const nodes = await transport.nodes();
  const keyPrefix = transport.keyPrefix;
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

async function inspect(node: RedisNode, keys: readonly string[]): Promise<Inspected> {
  const replies = await node.send(
    keys.flatMap((key) => [
      ['GETRANGE', key, 0, FIXED - 1],
      ['MEMORY', 'USAGE', key, 'SAMPLES', '0'],
    ]),
  );
  const inspected: Inspected = keys.map((_, i) => {
    const header = replies[2 * i];
    const bytes = replies[2 * i + 1];
    const usage = typeof bytes === 'number' ? bytes : null;
    // WRONGTYPE: a 0.1 HASH, read below. An empty reply: removed between SCAN and now. Anything else is no record.
    if (header instanceof Error) return [header.message.includes('WRONGTYPE') ? 'legacy' : null, null, usage];
    const peeked = Buffer.isBuffer(header) ? peekHeader(header) : undefined;
    if (peeked === undefined) return [null, null, usage];
    return [STATE_LETTERS[peeked.state], peeked.expiresAt, usage];
  });
  const legacy = inspected.flatMap(([state], i) => (state === 'legacy' ? [i] : []));
  if (legacy.length > 0) {
    const fields = await node.send(legacy.map((i) => ['HMGET', keys[i]!, 's', 'e']));
    legacy.forEach((i, j) => {
      const reply = fields[j];
      const [s, e] = Array.isArray(reply) ? reply : [null, null];
      inspected[i] = [s == null ? null : String(s), e == null ? null : Number(String(e)), inspected[i]![2]];
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

async function serverTime(node: RedisNode): Promise<number> {
  const [reply] = await node.send([['TIME']]);
  if (reply instanceof Error) throw reply;
  return timeOf(reply);
}
