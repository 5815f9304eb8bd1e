/**
 * @module Transactional mode's claim and its end: the claim is one call (`CALL begin(…, keep open)`) that starts
 * the transaction on a connection of its own and leaves it open when the key is claimed; the caller's writes go
 * through that connection; then the outcome and COMMIT, or a rollback, each at most once.
 */
import { LeaseLostError, StoreUnavailableError, TransactionEscapedError } from '../../core/errors.js';
import type {
  StoredOutcome,
  StoreTransaction,
  TransactionBeginInput,
  TransactionBeginResult,
} from '../../core/store.js';
import type { Connection } from './driver.js';
import { storeError } from './errors.js';
import { beginResultOf, beginValues, completeValues } from './rows.js';
import type { MySqlRuntime } from './runtime.js';
import { claimCommitted } from './transaction-escape.js';

// What a duplicate is told when an open transaction held the key past its lock wait.
const BUSY_RETRY_AFTER_MS = 1_000;
// begin answers `stale` after 8 rounds inside the server; one more call covers a burst.
const MAX_CLAIM_CALLS = 2;

export interface TransactionSettings {
  /** The shortest row lock wait of a claim, ms (`waitMs` may ask for longer). */
  readonly lockWaitMs: number;
}

/**
 * The row lock wait of a claim in whole seconds, as `innodb_lock_wait_timeout` takes it: `waitMs` or the
 * store's `lockWaitMs`, whichever is longer, rounded up, at least 1 (MySQL's least).
 */
export const lockWaitSeconds = (waitMs: number, lockWaitMs: number): number =>
  Math.max(1, Math.ceil(Math.max(waitMs, lockWaitMs) / 1_000));

/**
 * Transactional mode (see `Store.beginTransaction`). Round trips for a new key: the claim (one CALL that also
 * starts the transaction), the user's statements, `complete`, `COMMIT`. A duplicate of an open transaction
 * blocks on its uncommitted row (up to the lock wait), then sees the committed outcome.
 */
export async function beginTransaction(
  runtime: MySqlRuntime,
  settings: TransactionSettings,
  input: TransactionBeginInput,
): Promise<TransactionBeginResult> {
  const waitS = lockWaitSeconds(input.waitMs, settings.lockWaitMs);
  let connection: Connection;
  try {
    connection = await runtime.driver.connect();
  } catch (error) {
    throw storeError('connect', error, runtime.table);
  }
  const controller = new AbortController();
  const stopListening = connection.onLost((error) =>
    controller.abort(new StoreUnavailableError('the transaction connection was lost', { cause: error })),
  );
  let handedOut = false;
  try {
    for (let call = 1; ; call++) {
      const values = beginValues(input, runtime.now(), { waitS });
      const { rows } = await runtime.raw('begin', runtime.statements.begin, values, connection);
      const result = beginResultOf(rows[0]);
      if (result === 'busy') {
        return { kind: 'inProgress', retryAfterMs: Math.min(input.leaseMs, BUSY_RETRY_AFTER_MS), attempt: 1 };
      }
      if (result === 'stale') {
        if (call < MAX_CLAIM_CALLS) continue;
        throw new StoreUnavailableError(`mysql begin found the key changing for ${call} calls in a row`);
      }
      if (result.kind !== 'acquired') return result;
      handedOut = true;
      const held = { key: input.key, token: result.token };
      const transaction = openTransaction(runtime, connection, held, controller.signal, stopListening);
      return { ...result, transaction };
    }
  } catch (error) {
    // The claim's call failed half way, maybe with its transaction open: the connection goes, not back.
    stopListening();
    connection.destroy();
    handedOut = true;
    throw error;
  } finally {
    if (!handedOut) {
      stopListening();
      connection.release();
    }
  }
}

/** The open transaction of an acquired claim: settled once, then the connection goes back (or is closed). */
function openTransaction(
  runtime: MySqlRuntime,
  connection: Connection,
  held: { readonly key: string; readonly token: number },
  signal: AbortSignal,
  stopListening: () => void,
): StoreTransaction {
  const { key, token } = held;
  let open = true;
  const settle = () => {
    if (!open) return false;
    open = false;
    stopListening();
    return true;
  };
  /** Ends the transaction by closing its connection: the server rolls back whatever it had. */
  const drop = () => {
    connection.destroy();
  };
  return {
    handle: connection.handle,
    signal,
    async commit(outcome: StoredOutcome, retentionMs: number): Promise<void> {
      if (!settle()) throw new LeaseLostError(token, 'the transaction was settled already');
      let done = false;
      try {
        const values = completeValues(key, token, outcome, retentionMs, runtime.now());
        const { affectedRows } = await runtime.run(
          'complete',
          runtime.statements.complete,
          values,
          connection,
        );
        if (affectedRows !== 1) {
          // The transaction holds the row it claimed, so only the holder's own COMMIT or ROLLBACK on the handle
          // can have let it change: the claim escaped its transaction.
          throw new TransactionEscapedError(token);
        }
        await runtime.raw('commit', 'COMMIT', [], connection);
        done = true;
      } finally {
        if (done) connection.release();
        else drop();
      }
    },
    async rollback(): Promise<void> {
      if (!settle()) return;
      let committed: boolean;
      try {
        await connection.run('ROLLBACK', []);
        // Read on the same connection, now out of any transaction: a row our ROLLBACK left in place was committed
        // by the holder's code (transaction-escape.ts). One more round trip, on the failure path only.
        committed = await claimCommitted(runtime, key, token, connection);
        connection.release();
      } catch {
        // A connection that cannot roll back is closed: the server rolls back for it.
        drop();
        return;
      }
      if (committed) throw new TransactionEscapedError(token);
    },
    async abort(): Promise<void> {
      if (!settle()) return;
      // Closed, never returned: a statement its holder sends later fails instead of autocommitting outside the
      // claim, or running inside another request's transaction on a reused connection. KILL ends a statement the
      // holder still has running, so its locks go now and not when that statement would have finished.
      drop();
      if (connection.threadId !== undefined) {
        await runtime.driver.run('KILL ?', [connection.threadId]).catch(() => {});
      }
      // Nothing of ours ever committed: a row that still carries the claim was made durable by the holder's own
      // COMMIT; left in progress, its lease would end and a takeover run the effect again.
      if (await claimCommitted(runtime, key, token)) throw new TransactionEscapedError(token);
    },
  };
}
