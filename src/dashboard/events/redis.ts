/**
 * @module The event log on Redis: a batch written in one pipeline (counts per bucket, the capped list of notable
 * events), and the events panel read back.
 */
import type { EventRow, EventsPanel } from '../model.js';
import type { ResolvedSource } from '../source.js';
import { BUCKET_MS, type EventBatch, type LoggedEvent } from './entry.js';

type RedisSource = Extract<ResolvedSource, { kind: 'redis' }>;

/**
 * The event log in Redis, beside the records under the store's prefix and one hash tag (so a Cluster keeps it
 * in one slot): `<prefix>:{events}:log` a capped LIST of notable events (JSON, newest first),
 * `<prefix>:{events}:n:<bucket>` a HASH of counts per type with a TTL, `<prefix>:{events}:on` the marker that
 * an application writes a log. None of them matches the records' `SCAN` pattern (`<prefix>:{…}`).
 */
export async function flushToRedis(source: RedisSource, batch: EventBatch): Promise<void> {
  const log = source.eventsKey('log');
  const pipeline = source.client.pipeline();
  if (batch.events.length > 0) {
    pipeline.lpush(log, ...batch.events.map((event) => JSON.stringify(event)));
    pipeline.ltrim(log, 0, batch.keep - 1);
  }
  for (const [bucket, counts] of batch.counts) {
    const key = source.eventsKey(`n:${bucket}`);
    for (const [type, count] of counts) pipeline.hincrby(key, type, count);
    pipeline.pexpire(key, batch.countsRetentionMs + BUCKET_MS);
  }
  pipeline.set(source.eventsKey('on'), String(batch.at), 'PX', batch.countsRetentionMs);
  const results = (await pipeline.exec()) ?? [];
  const failed = results.find(([error]) => error);
  if (failed?.[0]) throw failed[0];
}

export async function readFromRedis(
  source: RedisSource,
  recent: number,
  buckets: readonly number[],
): Promise<Omit<EventsPanel, 'bucketMs'>> {
  const pipeline = source.client.pipeline();
  pipeline.exists(source.eventsKey('on'));
  pipeline.lrange(source.eventsKey('log'), 0, recent - 1);
  for (const bucket of buckets) pipeline.hgetall(source.eventsKey(`n:${bucket}`));
  const results = (await pipeline.exec()) ?? [];
  const failed = results.find(([error]) => error);
  if (failed?.[0]) throw failed[0];
  const [on, entries, ...counts] = results.map(([, value]) => value);
  const recentRows = ((entries as string[] | undefined) ?? []).flatMap((entry): EventRow[] => {
    try {
      const parsed = JSON.parse(entry) as LoggedEvent;
      return [{ at: parsed.at, type: parsed.type, key: parsed.key ?? null, detail: parsed.detail }];
    } catch {
      return [];
    }
  });
  return {
    available: on === 1 || recentRows.length > 0,
    recent: recentRows,
    rates: buckets.map((at, i) => ({ at, counts: numbers(counts[i]) })),
  };
}

function numbers(hash: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (hash !== null && typeof hash === 'object') {
    for (const [type, value] of Object.entries(hash)) out[type] = Number(value);
  }
  return out;
}
