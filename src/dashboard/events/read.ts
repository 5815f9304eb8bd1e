/** @module The dashboard's events panel, read from whichever store the event log writes into. */
import type { EventsPanel } from '../model.js';
import type { ResolvedSource } from '../source.js';
import { BUCKET_MS, bucketOf } from './entry.js';
import { readFromPostgres } from './postgres.js';
import { readFromRedis } from './redis.js';

/** The recent notable events and the counts of the last `windowMs`, one zero-filled entry per bucket. */
export async function readEvents(
  source: ResolvedSource,
  recent: number,
  windowMs: number,
  now = Date.now(),
): Promise<EventsPanel> {
  const last = bucketOf(now);
  const buckets: number[] = [];
  for (let at = last - windowMs + BUCKET_MS; at <= last; at += BUCKET_MS) buckets.push(at);
  const read =
    source.kind === 'redis'
      ? await readFromRedis(source, recent, buckets)
      : await readFromPostgres(source, recent, buckets);
  return { ...read, bucketMs: BUCKET_MS };
}
