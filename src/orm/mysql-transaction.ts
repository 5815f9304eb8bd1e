/**
 * @module Transactional mode on MySQL through an ORM, in a transaction the ORM opens for the claim: the claim (the
 * store's claim procedure, one CALL), the handler's writes through the ORM's own transaction object and the outcome,
 * then the ORM's COMMIT. (Joining a transaction the caller opened is the MySQL store's joined mode, with the ORM's
 * object as the connection: transaction-join.ts.)
 *
 * What differs from PostgreSQL: a failed statement does not fail a MySQL transaction, so a lease end cannot fence
 * the ORM's transaction with a failing statement; the claim's connection is KILLed instead (its id comes back with
 * the claim), which rolls it back on the server at once and makes every later statement on it fail. And a COMMIT
 * the handler's code sent is found from the record when the claim rolls back or its lease ends (the claim's row is
 * durable when it should not be: transaction-escape.ts).
 */
import { LeaseLostError, StoreUnavailableError, TransactionEscapedError } from '../core/errors.js';
import type {
  BeginResult,
  StoredOutcome,
  StoreTransaction,
  TransactionBeginInput,
  TransactionBeginResult,
} from '../core/store.js';
import type { Executor } from '../stores/mysql/driver.js';
import { ER_LOCK_DEADLOCK, isServerAnswer, storeError } from '../stores/mysql/errors.js';
import { claimAnswerOf, claimValues, completeValues } from '../stores/mysql/rows.js';
import type { MySqlRuntime } from '../stores/mysql/runtime.js';
import { claimCommitted } from '../stores/mysql/transaction-escape.js';
import { errnoOf } from '../stores/mysql/transaction-join.js';
import { lockWaitSeconds } from '../stores/mysql/transaction-run.js';
import type { IsolationLevel, MySqlSqlDriver } from './driver.js';
import { type HeldTransaction, heldTransaction } from './held-transaction.js';
import { mysqlFailure, runThrough } from './mysql-source.js';

export interface OrmMySqlSettings<Handle> {
  readonly driver: MySqlSqlDriver<Handle>;
  readonly runtime: MySqlRuntime;
  readonly isolation: IsolationLevel | undefined;
  readonly lockWaitMs: number;
}

// A deadlock's victim is the whole transaction; the claim's own one starts over this often.
const MAX_CLAIM_ROUNDS = 4;
const BUSY_RETRY_AFTER_MS = 1_000;
// The ORM's own transaction clock (Prisma's interactive timeout) runs this much past the lease, so the lease's end
// comes first.
const TIMEOUT_MARGIN_MS = 5_000;
// How long a KILLed transaction is left to its holder before it is ended anyway: ten leases, at least a minute.
const fenceMsOf = (leaseMs: number) => Math.max(60_000, 10 * leaseMs);

/** An executor on the held transaction's connection, for the store's statements. */
function executorOn<Handle>(driver: MySqlSqlDriver<Handle>, handle: Handle): Executor {
  return { run: (sql, values) => runThrough((text) => driver.kind.query(handle, text), sql, values) };
}

/** `beginTransaction` for a MySQL store on an ORM: see the module's comment. */
export async function beginOrmMySqlTransaction<Handle>(
  settings: OrmMySqlSettings<Handle>,
  input: TransactionBeginInput,
): Promise<TransactionBeginResult> {
  const { driver, runtime } = settings;
  const waitS = lockWaitSeconds(input.waitMs, settings.lockWaitMs);
  const busy: BeginResult = {
    kind: 'inProgress',
    retryAfterMs: Math.min(input.leaseMs, BUSY_RETRY_AFTER_MS),
    attempt: 1,
  };
  for (let round = 1; ; round++) {
    let held: HeldTransaction<Handle>;
    try {
      held = await heldTransaction(driver, {
        isolation: settings.isolation,
        timeoutMs: input.leaseMs + TIMEOUT_MARGIN_MS,
      });
    } catch (error) {
      throw storeError('begin', mysqlFailure(error), runtime.table);
    }
    const drop = () => held.end(false).catch(() => {});
    const on = executorOn(driver, held.handle);
    let answer: ReturnType<typeof claimAnswerOf>;
    try {
      const { rows } = await on.run(runtime.statements.claim, claimValues(input, runtime.now(), waitS));
      answer = claimAnswerOf(rows[0]);
    } catch (error) {
      await drop();
      // The transaction is oncely's own: a deadlock's victim starts over in a new one.
      if (errnoOf(error) === ER_LOCK_DEADLOCK && round < MAX_CLAIM_ROUNDS) continue;
      throw storeError('begin', error, runtime.table);
    }
    const { result, connectionId } = answer;
    if (result !== 'busy' && result !== 'lost' && result !== 'outside' && result.kind === 'acquired') {
      const claim = { key: input.key, token: result.token, connectionId, leaseMs: input.leaseMs };
      return { ...result, transaction: ormMySqlTransaction(settings, held, on, claim) };
    }
    await drop();
    if (result === 'busy' || result === 'lost') return busy;
    if (result === 'outside') {
      throw new StoreUnavailableError(
        `${driver.kind.name}: the transaction the ORM opened for the claim is not open on the server (is the ORM set to run without transactions?)`,
      );
    }
    return result;
  }
}

interface Claim {
  readonly key: string;
  readonly token: number;
  /** The server's id of the transaction's connection, for KILL at a lease end. */
  readonly connectionId: number | undefined;
  readonly leaseMs: number;
}

function ormMySqlTransaction<Handle>(
  settings: OrmMySqlSettings<Handle>,
  held: HeldTransaction<Handle>,
  on: Executor,
  claim: Claim,
): StoreTransaction {
  const { driver, runtime } = settings;
  const { key, token } = claim;
  let open = true;
  let ended = false;
  const settle = () => {
    if (!open) return false;
    open = false;
    return true;
  };
  const end = async (commit: boolean) => {
    if (ended) return;
    ended = true;
    await held.end(commit);
  };
  const drop = () => end(false).catch(() => {});
  const escaped = () => new TransactionEscapedError(token);
  return {
    handle: held.handle,
    // No driver-independent way to hear a connection drop: a lost connection fails the next statement instead.
    signal: new AbortController().signal,
    async commit(outcome: StoredOutcome, retentionMs: number): Promise<void> {
      if (!settle()) throw new LeaseLostError(token, 'the transaction was settled already');
      let affectedRows: number;
      try {
        const values = completeValues(key, token, outcome, retentionMs, runtime.now());
        ({ affectedRows } = await runtime.run('complete', runtime.statements.complete, values, on));
      } catch (error) {
        await drop();
        throw error;
      }
      if (affectedRows !== 1) {
        // The transaction holds the row it claimed, so only a ROLLBACK of the holder's own on the handle can have
        // let it go: the claim escaped its transaction, and nothing of it is left to commit.
        await drop();
        throw escaped();
      }
      try {
        await end(true);
      } catch (error) {
        const failure = mysqlFailure(error);
        // A COMMIT the server answered with an error ended the transaction without committing it; one that got no
        // answer (the connection broke under it) may or may not have.
        const what = isServerAnswer(failure)
          ? 'refused by the server: nothing of it committed; a retry runs once more'
          : 'whether it committed is unknown; a retry replays the outcome or runs once more';
        throw storeError(`commit (${what})`, failure, runtime.table);
      }
    },
    async rollback(): Promise<void> {
      if (!settle()) return;
      await drop();
      // A row our rollback left in place was committed by the holder's own COMMIT (transaction-escape.ts).
      if (await claimCommitted(runtime, key, token)) throw escaped();
    },
    async abort(): Promise<void> {
      if (!settle()) return;
      // The holder may still be writing through the handle. Ending the ORM's transaction would let a late statement
      // run on a connection back in the pool, so the connection is KILLed instead (the server rolls it back, and
      // the handle can never write again), and the ORM's transaction ended once its holder is done (`close`).
      let killed = false;
      if (claim.connectionId !== undefined) {
        killed = await driver
          .query(`KILL ${claim.connectionId}`)
          .then(() => true)
          .catch(() => false);
      }
      if (killed) setTimeout(() => void drop(), fenceMsOf(claim.leaseMs)).unref();
      else await drop();
      if (await claimCommitted(runtime, key, token)) throw escaped();
    },
    async close(): Promise<void> {
      await drop();
    },
  };
}
