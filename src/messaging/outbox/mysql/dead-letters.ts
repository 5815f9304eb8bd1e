/**
 * @module Dead letters on MySQL / MariaDB: listed a page at a time; discarded and replayed `DEAD_BATCH` rows at a
 * time, chosen by a plain read and then locked or deleted by primary key; a replayed row gets a new seq under its
 * key's lock, as a writer's.
 */
import type { Connection } from '../../../stores/mysql/driver.js';
import type { DeadLetterFilter, OutboxBackend } from '../backend.js';
import { digits } from './bind.js';
import { deadLetterOf, idOf, numberOf } from './rows.js';
import { type MySqlSession, runOn } from './session.js';
import type { MySqlOutboxStatements } from './statements.js';

/** Rows discarded or replayed per round (a replay's round is one transaction): bounds locks and statement length. */
export const DEAD_BATCH = 1_000;

const selection = ({ ids, topic }: DeadLetterFilter) => ({
  all: ids === null ? 1 : 0,
  ids: digits(ids ?? []),
  topic: topic === null ? null : Buffer.from(topic, 'utf8'),
  batch: DEAD_BATCH,
});

export function mysqlDeadLetters(
  session: MySqlSession,
  sql: MySqlOutboxStatements,
): Pick<OutboxBackend, 'listDeadLetters' | 'replayDeadLetters' | 'discardDeadLetters'> {
  /** Rounds of `act` on the chosen rows, until a round chooses fewer than a full batch. */
  const rounds = async (filter: DeadLetterFilter, act: (ids: string[]) => Promise<number>) => {
    let done = 0;
    // A short round means nothing is left: the loop never comes back for rows that died again meanwhile.
    for (;;) {
      const chosen = (await session.run(sql.deadChosen, selection(filter))).rows.map((row) => idOf(row.id));
      if (chosen.length > 0) done += await act(chosen);
      if (chosen.length < DEAD_BATCH) return done;
    }
  };
  return {
    async listDeadLetters(after, topic, limit) {
      const params = { after: digits([after]), topic: topic === null ? null : Buffer.from(topic), limit };
      return (await session.run(sql.listDeadLetters, params)).rows.map(deadLetterOf);
    },
    discardDeadLetters(filter) {
      return rounds(
        filter,
        async (ids) => (await session.run(sql.discardDeadLetters, { ids: digits(ids) })).affectedRows,
      );
    },
    replayDeadLetters(filter) {
      return rounds(filter, (ids) => session.transaction((connection) => replay(connection, sql, ids)));
    },
  };
}

/** One replay round, in its transaction: lock the rows, take their keys' locks and new seqs, put them back. */
async function replay(connection: Connection, sql: MySqlOutboxStatements, chosen: string[]): Promise<number> {
  const locked = (await runOn(connection, sql.lockDead, { ids: digits(chosen) })).rows.map((row) => ({
    id: idOf(row.id),
    hash: (row.key_hash as Buffer | null) ?? null,
  }));
  if (locked.length === 0) return 0;
  const perKey = new Map<string, { hash: Buffer; ids: string[] }>();
  for (const { id, hash } of locked) {
    if (hash === null) continue;
    const hex = hash.toString('hex');
    const entry = perKey.get(hex) ?? { hash, ids: [] };
    entry.ids.push(id);
    perKey.set(hex, entry);
  }
  // Hash order, as writers take several keys: no deadlock between a replay and a writer of two of its keys.
  const keys = [...perKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [, { hash, ids }] of keys) await runOn(connection, sql.lockKey, { hash, count: ids.length });
  const last = new Map<string, number>();
  if (keys.length > 0) {
    const hashes = keys.map(([, { hash }]) => hash);
    for (const row of (await runOn(connection, sql.keySeqs, { hashes })).rows) {
      last.set((row.key_hash as Buffer).toString('hex'), numberOf(row.seq));
    }
  }
  // Each key's rows take its new seqs in their old order (lock-dead.sql reads them so).
  const seqOf = new Map<string, number>();
  for (const [hex, { ids }] of keys) {
    const top = last.get(hex)!;
    ids.forEach((id, i) => {
      seqOf.set(id, top - (ids.length - 1 - i));
    });
  }
  const ids = locked.map(({ id }) => id);
  await runOn(connection, sql.replay, { ids: digits(ids), seqs: ids.map((id) => seqOf.get(id) ?? 0) });
  return locked.length;
}
