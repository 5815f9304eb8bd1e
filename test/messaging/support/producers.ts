import type pg from 'pg';
import type { Outbox } from '../../../src/messaging/outbox/index.js';

export interface Produced {
  /** Per key, the sequence numbers of committed events, in commit order. */
  readonly committed: Map<string, number[]>;
  readonly committedIds: Set<string>;
  readonly rolledBack: number;
}

/**
 * Writes `total` events from `producers` concurrent transactions (1–4 events each, `rollbackRate` of them
 * rolled back). Each key belongs to one producer, whose transactions follow one another, so the committed
 * sequence numbers of a key are the order a consumer must see.
 */
export async function produce(
  pool: pg.Pool,
  outbox: Outbox,
  {
    total,
    keys,
    producers,
    rollbackRate,
    topic,
  }: { total: number; keys: number; producers: number; rollbackRate: number; topic: string },
): Promise<Produced> {
  const committed = new Map<string, number[]>();
  const committedIds = new Set<string>();
  const nextSeq = new Map<string, number>();
  let reserved = 0;
  let rolledBack = 0;
  const run = async (producer: number) => {
    const own = Array.from(
      { length: Math.ceil(keys / producers) },
      (_, i) => producer + i * producers,
    ).filter((k) => k < keys);
    const client = await pool.connect();
    try {
      while (reserved < total) {
        const count = Math.min(total - reserved, 1 + Math.floor(Math.random() * 4));
        reserved += count;
        const events = Array.from({ length: count }, () => {
          const key = `key-${own[Math.floor(Math.random() * own.length)]}`;
          const seq = nextSeq.get(key) ?? 0;
          nextSeq.set(key, seq + 1);
          return { topic, key, payload: { key, seq } };
        });
        await client.query('BEGIN');
        const ids = await outbox.addMany(client, events);
        if (Math.random() < rollbackRate) {
          await client.query('ROLLBACK');
          rolledBack += count;
          continue;
        }
        await client.query('COMMIT');
        for (const id of ids) committedIds.add(id);
        for (const { key, payload } of events) {
          const list = committed.get(key) ?? [];
          list.push(payload.seq);
          committed.set(key, list);
        }
      }
    } finally {
      client.release();
    }
  };
  await Promise.all(Array.from({ length: producers }, (_, p) => run(p)));
  return { committed, committedIds, rolledBack };
}

/** Groups delivered `{ key, seq }` payloads by key, in delivery order. */
export function byKey(delivered: Iterable<{ key: string; seq: number }>): Map<string, number[]> {
  const map = new Map<string, number[]>();
  for (const { key, seq } of delivered) {
    const list = map.get(key) ?? [];
    list.push(seq);
    map.set(key, list);
  }
  return map;
}
