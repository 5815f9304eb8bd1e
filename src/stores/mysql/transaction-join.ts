/**
 * @module Transactional mode inside a transaction the caller opened (`transactional({ connection })`, and the ORM
 * stores' `join(trx)` on MySQL): the claim, the handler's writes and the outcome go in a SAVEPOINT of it. Nothing is
 * durable until the caller commits; a rollback of the caller's transaction leaves neither record nor effect; a
 * handler that fails undoes its own part only, and the caller's transaction goes on.
 *
 * Round trips: `SAVEPOINT`, the claim (one CALL), the handler's statements, `RELEASE SAVEPOINT`, the outcome.
 * Escapes (the handler's code ended the caller's transaction: `COMMIT`, `ROLLBACK`, a `START TRANSACTION` that
 * commits implicitly) are found by the database: every transaction end drops its savepoints, so the savepoint's
 * release (before the outcome is written: it never lands outside the transaction) or its rollback fails with 1305.
 */
import {
  InvalidOptionsError,
  LeaseLostError,
  StoreUnavailableError,
  TransactionEscapedError,
} from '../../core/errors.js';
import type {
  BeginResult,
  StoredOutcome,
  StoreTransaction,
  TransactionBeginInput,
  TransactionBeginResult,
} from '../../core/store.js';
import type { Answer, SqlValue } from './driver.js';
import { ER_LOCK_DEADLOCK, serverErrorOf, storeError } from './errors.js';
import { claimAnswerOf, claimValues, completeValues } from './rows.js';
import type { MySqlRuntime } from './runtime.js';
import { claimCommitted } from './transaction-escape.js';
import { lockWaitSeconds } from './transaction-run.js';

/** ER_SP_DOES_NOT_EXIST, as MySQL answers a savepoint that is not there: its transaction has ended. */
const SAVEPOINT_GONE = 1305;
// What a duplicate is told when an open transaction held the key past its lock wait.
const BUSY_RETRY_AFTER_MS = 1_000;

/** The caller's open transaction, as joined mode reaches it: a connection of theirs, or an ORM's transaction. */
export interface JoinedTransaction {
  /** What the handler writes through: the caller's connection or ORM transaction object, as given. */
  readonly handle: unknown;
  /** Runs one statement in the caller's transaction. */
  run(sql: string, values: readonly SqlValue[]): Promise<Answer>;
  /** Calls `listener` when the connection is lost, where the handle tells; returns how to stop listening. */
  onLost?(listener: (error?: unknown) => void): () => void;
}

export interface JoinSettings {
  /** The shortest row lock wait of a claim, ms (`waitMs` may ask for longer). */
  readonly lockWaitMs: number;
}

// Savepoints are named per claim: a savepoint of the same name REPLACES an older one in MySQL (PostgreSQL stacks
// them), so a claim joined inside another claim's transaction would otherwise take the outer claim's undo point.
let claims = 0;
const nextSavepoint = (): string => {
  claims = claims >= Number.MAX_SAFE_INTEGER ? 1 : claims + 1;
  return `oncely_claim_${claims}`;
};

/** The server's error number of a failure, the driver's own or the one a store error carries as its cause. */
export function errnoOf(error: unknown): number | undefined {
  return serverErrorOf(error) ?? serverErrorOf((error as { cause?: unknown } | null)?.cause);
}

/** `beginTransaction` in the caller's open transaction: see the module's comment. */
export async function beginJoined(
  runtime: MySqlRuntime,
  settings: JoinSettings,
  joined: JoinedTransaction,
  input: TransactionBeginInput,
): Promise<TransactionBeginResult> {
  const savepoint = nextSavepoint();
  const waitS = lockWaitSeconds(input.waitMs, settings.lockWaitMs);
  const control = async (operation: string, sql: string) => {
    try {
      await joined.run(sql, []);
    } catch (error) {
      throw storeError(operation, error, runtime.table);
    }
  };
  await control('savepoint', `SAVEPOINT ${savepoint}`);
  let answer: ReturnType<typeof claimAnswerOf>;
  try {
    const { rows } = await joined.run(runtime.statements.claim, claimValues(input, runtime.now(), waitS));
    answer = claimAnswerOf(rows[0]);
  } catch (error) {
    if (errnoOf(error) === ER_LOCK_DEADLOCK) {
      // The deadlock's victim is the whole transaction: the caller's writes went with it, and so did the savepoint.
      throw new StoreUnavailableError(
        'mysql begin lost a deadlock (error 1213): the server rolled back the transaction you joined; run it again from its start',
        { cause: error },
      );
    }
    await joined.run(`ROLLBACK TO SAVEPOINT ${savepoint}`, []).catch(() => {});
    throw storeError('begin', error, runtime.table);
  }
  const { result } = answer;
  if (result === 'outside') {
    throw new InvalidOptionsError(
      'transactional: no transaction is open on the joined connection; begin one on it first (the claim would commit on its own)',
    );
  }
  if (result === 'lost') {
    throw new StoreUnavailableError(
      "mysql begin: the key's row lock wait ran out and the server rolled back the transaction you joined with it (innodb_rollback_on_timeout); run it again from its start",
    );
  }
  if (result !== 'busy' && result.kind === 'acquired') {
    return { ...result, transaction: joinedTransaction(runtime, joined, savepoint, input.key, result.token) };
  }
  // Nothing was written: the savepoint only goes (the row's lock stays until the caller's transaction ends).
  await control('release savepoint', `RELEASE SAVEPOINT ${savepoint}`);
  if (result === 'busy') {
    const busy: BeginResult = {
      kind: 'inProgress',
      retryAfterMs: Math.min(input.leaseMs, BUSY_RETRY_AFTER_MS),
      attempt: 1,
    };
    return busy;
  }
  return result;
}

/** The acquired claim, in the caller's transaction: settled once; the caller's transaction is theirs to end. */
function joinedTransaction(
  runtime: MySqlRuntime,
  joined: JoinedTransaction,
  savepoint: string,
  key: string,
  token: number,
): StoreTransaction {
  const controller = new AbortController();
  const stopListening =
    joined.onLost?.((error) =>
      controller.abort(new StoreUnavailableError('the joined connection was lost', { cause: error })),
    ) ?? (() => {});
  let open = true;
  const settle = () => {
    if (!open) return false;
    open = false;
    stopListening();
    return true;
  };
  const escaped = () => new TransactionEscapedError(token);
  // After an escape, nothing the holder's code opened since stays open: it rolls back, as a refused outcome's writes
  // would. A connection that cannot even do that is gone, and the server rolls back for it.
  const rollBackAll = () =>
    joined.run('ROLLBACK', []).then(
      () => {},
      () => {},
    );
  /** Undoes the claim and the handler's writes; true when the holder's code had committed them (an escape). */
  const undo = async (): Promise<boolean> => {
    try {
      await joined.run(`ROLLBACK TO SAVEPOINT ${savepoint}`, []);
      return false;
    } catch (error) {
      if (errnoOf(error) !== SAVEPOINT_GONE) return false;
      await rollBackAll();
      // The caller's transaction ended under the handler: by a COMMIT of its code (the claim is durable: an escape),
      // or by a rollback, its code's or the server's (a deadlock's victim, an ordinary thing on MySQL). Then nothing
      // of the claim is left, and the handler's own failure says what happened. Its locks are gone: no wait here.
      return claimCommitted(runtime, key, token);
    }
  };
  return {
    handle: joined.handle,
    signal: controller.signal,
    async commit(outcome: StoredOutcome, retentionMs: number): Promise<void> {
      if (!settle()) throw new LeaseLostError(token, 'the transaction was settled already');
      // The savepoint first: if the caller's transaction is gone, the outcome is never written (it would commit on
      // its own, or in a transaction the holder's code began).
      try {
        await joined.run(`RELEASE SAVEPOINT ${savepoint}`, []);
      } catch (error) {
        if (errnoOf(error) !== SAVEPOINT_GONE) throw storeError('release savepoint', error, runtime.table);
        await rollBackAll();
        throw escaped();
      }
      const values = completeValues(key, token, outcome, retentionMs, runtime.now());
      const { affectedRows } = await runtime.run('complete', runtime.statements.complete, values, joined);
      // The caller's transaction holds the claimed row locked: only a statement of its own can have changed it.
      // What it holds now (the claim and the handler's writes) must not commit: throwing tells its owner to roll back.
      if (affectedRows !== 1) {
        throw new LeaseLostError(token, "the key's row changed inside your transaction: roll it back");
      }
    },
    async rollback(): Promise<void> {
      if (!settle()) return;
      if (await undo()) throw escaped();
    },
    async abort(): Promise<void> {
      // The lease ran out while the handler still runs: its part is undone and the key free again; what its code
      // writes afterwards lands in the caller's transaction, theirs to commit or not (as in PostgreSQL's join).
      if (!settle()) return;
      if (await undo()) throw escaped();
    },
  };
}
