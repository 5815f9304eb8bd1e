/**
 * @module How a transactional claim finds out, when it is settled, that the holder's code ended the claim's
 * transaction itself (an escape), and what it leaves on the connection then. Detection costs no round trip: it
 * rides along statements the claim sends anyway (the claim, the outcome, the rollback).
 *
 * Why the transaction id and the record, not the statements: PostgreSQL does not report every escape (`COMMIT AND
 * CHAIN`, `COMMIT; BEGIN` or `END; BEGIN` in one string leave ReadyForQuery at 'T' with no warning), and the
 * CommandComplete tags that would name them are not enough either: pg-native exposes no protocol stream, and
 * `ROLLBACK TO SAVEPOINT` (the holder's own savepoints, which are fine) answers with the same 'ROLLBACK' tag as
 * `ROLLBACK AND CHAIN`. What decides is whether the outcome would still commit with the claim's writes, and the
 * database knows: on the way to commit, the transaction id (complete-in-transaction.sql); on the way to roll
 * back, whether the claim's row outlived the rollback (committed already) or the savepoint is still there.
 * `watchTransaction` stays as the early signal it was (a nested `BEGIN`, a bare `COMMIT` seen at once).
 */
import { sqlStateOf } from './errors.js';
import type { PostgresRuntime } from './runtime.js';
import { inlineParameters } from './sql.js';
import { type Session, undo } from './transaction-session.js';

/** `pg_current_xact_id_if_assigned()`, sent at the end of the claim's message: the claim's transaction id. */
export const CLAIM_XID = 'pg_current_xact_id_if_assigned()::text AS xid';

// A savepoint undo that fails with these found no savepoint to go back to (3B001) or no transaction at all
// (25P01): the caller's transaction, which held the savepoint, was ended by the holder's code.
const SAVEPOINT_GONE = new Set(['3B001', '25P01']);

/**
 * Rolls the claim back and says whether its transaction had escaped. Own transaction: `ROLLBACK` and a read of the
 * key's record in ONE message; our row can only outlive our ROLLBACK if a COMMIT on this connection made it
 * durable already. Joined: the savepoint undo fails when the caller's transaction is gone. Either way, nothing the
 * holder's code opened after the escape is left open (`undoEscaped`).
 */
export async function rollBackChecked(
  runtime: PostgresRuntime,
  session: Session,
  key: string,
  token: number,
): Promise<boolean> {
  if (session.scope.joined) {
    try {
      await session.client.query(session.scope.undo);
      return false;
    } catch (error) {
      if (!SAVEPOINT_GONE.has(sqlStateOf(error) ?? '')) {
        session.broken = true;
        return false;
      }
      await rollBackAll(session);
      return true;
    }
  }
  try {
    const read = inlineParameters(runtime.statements.get, [key, runtime.now()]);
    const results = await runtime.script(session.client, `${session.scope.undo};\n${read}`);
    const row = results[1]?.[0];
    return row?.state === 'inProgress' && row.token === token;
  } catch {
    // The connection is gone: the server rolls back what it can, and whether the claim had escaped is unknown.
    session.broken = true;
    return false;
  }
}

/**
 * Whether the claim's row, read on a pooled connection after the claim's own was closed, carries the claim's token
 * in progress: only the holder's COMMIT can have made it durable. A read that fails tells nothing (false); the key
 * then stays in progress until a takeover, as before.
 */
export async function escapedBeforeAbort(
  runtime: PostgresRuntime,
  key: string,
  token: number,
): Promise<boolean> {
  try {
    const [row] = await runtime.rows('get', runtime.statements.get, [key, runtime.now()]);
    return row?.state === 'inProgress' && row.token === token;
  } catch {
    return false;
  }
}

/**
 * After an escape, nothing stays open: the transaction on the connection now is not the claim's (a chained or new
 * one the holder began, or the remains of a nested `BEGIN`), and what the holder wrote in it is rolled back, as a
 * refused outcome's writes are. Joined mode first tries the savepoint, since after a nested `BEGIN` (a warning,
 * no escape yet) the caller's transaction is still open and theirs to end.
 */
export async function undoEscaped(session: Session): Promise<void> {
  if (!session.scope.joined) return undo(session);
  try {
    await session.client.query(session.scope.undo);
  } catch {
    await rollBackAll(session);
  }
}

async function rollBackAll(session: Session): Promise<void> {
  try {
    await session.client.query('ROLLBACK');
  } catch {
    session.broken = true;
  }
}
