import type { Redis } from 'ioredis';
import type { KeyRecord } from '../core/store.js';
import { FINGERPRINT as INBOX_FINGERPRINT, PARKED_HEADER } from '../messaging/consumer.js';
import { escapeGlob } from '../stores/redis/keys.js';
import { encodeOutcome, FIXED, LAYOUT } from '../stores/redis/record.js';
import { isCluster } from '../stores/redis/scripts.js';
import { type KeyTally, newTally, type RecordView, tallyRecord } from './keys-tally.js';
import type { KeyStateName } from './model.js';
import type { ResolvedSource } from './source.js';

type RedisSource = Extract<ResolvedSource, { kind: 'redis' }>;

const SCAN_COUNT = 500;
/**
 * Bytes read of each record: the fixed header, a fingerprint (43 for HTTP, 13 for the inbox) and the start of
 * the outcome (its status, and the whole of a parked mark). Never the body: GETRANGE stops well before it.
 */
const PEEK = FIXED + 128;
const STATES: Readonly<Record<number, KeyStateName>> = {
  112: 'inProgress',
  99: 'completed',
  114: 'released',
};
/** The outcome bytes of an inbox's parked mark, exactly as the Redis store writes them. */
const PARKED_OUTCOME = encodeOutcome({
  status: 0,
  headers: [[PARKED_HEADER, 'parked']],
  body: new Uint8Array(0),
  encoding: 'identity',
  storage: 'inline',
});

/**
 * Reads the records under the prefix, as `oncely stats` does: SCAN (every master of a Cluster), never KEYS, and a
 * pipelined GETRANGE of each record's first bytes, so no body is ever read. `limit` bounds the keys SCAN walks,
 * all nodes together, not the records it finds: MATCH filters after the walk, so in a Redis where oncely's
 * records are a few among millions of other keys, a bound on records found would still walk them all. Each call
 * asks for at most what is left of it; when it runs out before the end, the tally is `truncated`.
 */
export async function scanRedisKeys(
  source: RedisSource,
  limit: number,
  listLimit: number,
): Promise<KeyTally> {
  const { client } = source;
  const nodes: Redis[] = isCluster(client) ? client.nodes('master') : [client];
  const keyPrefix = client.options.keyPrefix ?? '';
  const head = `${source.prefix}:{`;
  const pattern = `${escapeGlob(keyPrefix)}${escapeGlob(head)}*}`;
  const tally = newTally(listLimit);
  let left = limit;
  for (const node of nodes) {
    const now = await serverTime(node);
    let cursor = '0';
    do {
      if (left <= 0) {
        tally.truncated = true;
        return tally;
      }
      // COUNT is the work a call does (keys walked), whatever MATCH keeps of them.
      const count = Math.min(SCAN_COUNT, left);
      left -= count;
      tally.scanned += count;
      const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', count);
      cursor = next;
      const keys = found.map((k) => k.slice(keyPrefix.length));
      if (keys.length > 0) {
        for (const view of await peek(source, node, keys, head)) tallyRecord(tally, view, now);
      }
    } while (cursor !== '0');
  }
  return tally;
}

async function peek(
  source: RedisSource,
  node: Redis,
  redisKeys: readonly string[],
  head: string,
): Promise<RecordView[]> {
  const pipeline = node.pipeline();
  for (const key of redisKeys) pipeline.getrangeBuffer(key, 0, PEEK - 1);
  const replies = (await pipeline.exec()) ?? [];
  const views: RecordView[] = [];
  for (const [i, redisKey] of redisKeys.entries()) {
    const key = redisKey.slice(head.length, -1);
    const [error, bytes] = replies[i] ?? [];
    if (error) {
      // WRONGTYPE: a record of oncely 0.1 (a HASH). The store's get script reads those; they are rare.
      if (String((error as Error).message).startsWith('WRONGTYPE')) {
        const record = await source.store.get(key).catch(() => undefined);
        if (record !== undefined) views.push(legacyView(record));
      }
      continue;
    }
    if (Buffer.isBuffer(bytes)) {
      const view = viewOf(key, bytes);
      if (view !== undefined) views.push(view);
    }
  }
  return views;
}

/** The header fields of a layout-2 record (see scripts/lib/record.lua for the byte diagram). */
function viewOf(key: string, bytes: Buffer): RecordView | undefined {
  if (bytes.length < FIXED || bytes[0] !== LAYOUT) return undefined;
  const state = STATES[bytes[1]!];
  if (state === undefined) return undefined;
  const fpLen = bytes.readUInt16BE(3);
  const outcomeAt = FIXED + fpLen;
  const completed = state === 'completed';
  const status = completed && bytes.length >= outcomeAt + 2 ? bytes.readUInt16BE(outcomeAt) : null;
  const parked =
    completed &&
    bytes.length === outcomeAt + PARKED_OUTCOME.length &&
    bytes.toString('utf8', FIXED, outcomeAt) === INBOX_FINGERPRINT &&
    bytes.subarray(outcomeAt).equals(PARKED_OUTCOME);
  return {
    key,
    state,
    attempt: bytes.readUInt32BE(5),
    token: bytes.readUIntBE(9, 6),
    leaseUntil: bytes.readUIntBE(15, 6),
    createdAt: bytes.readUIntBE(27, 6),
    completedAt: completed ? bytes.readUIntBE(33, 6) : null,
    expiresAt: bytes.readUIntBE(21, 6),
    status,
    // Layout 2 keeps no takeover flag; the attempt count and the event log tell instead.
    takenOver: null,
    parked,
  };
}

/** A record of oncely 0.1, read through the store (whose script understands that layout). */
function legacyView(record: KeyRecord): RecordView {
  return {
    key: record.key,
    state: record.state,
    attempt: record.attempt,
    token: record.token,
    leaseUntil: record.leaseUntil,
    createdAt: record.createdAt,
    completedAt: record.completedAt ?? null,
    expiresAt: record.expiresAt,
    status: record.outcome?.status ?? null,
    takenOver: null,
    parked: false,
  };
}

async function serverTime(node: Redis): Promise<number> {
  const [seconds, micros] = await node.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}
