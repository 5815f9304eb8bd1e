/**
 * @module Transactional mode through an ORM: the claim, the handler's writes (through the ORM's own transaction
 * object) and the outcome commit together, in a transaction the ORM opened for oncely, or in a savepoint of one the
 * caller opened (joined). The statements are the PostgreSQL store's own, sent through the ORM's raw query; the
 * escape checks are the database's (the claim's transaction id, the record after a rollback), never a driver's
 * protocol events, so they hold on every ORM.
 */
import { LeaseLostError, TransactionEscapedError } from '../core/errors.js';
import type {
  BeginResult,
  StoredOutcome,
  StoreTransaction,
  TransactionBeginInput,
  TransactionBeginResult,
} from '../core/store.js';
import { isLockNotAvailable, isRetryableConflict, storeError } from '../stores/postgres/errors.js';
import { beginResultOf, beginValues, completeValues, type Row } from '../stores/postgres/rows.js';
import type { Statements } from '../stores/postgres/sql.js';
import { inlineParameters } from '../stores/postgres/sql.js';
import type { IsolationLevel } from '../stores/postgres/transaction-session.js';
import { boundedClaim } from './bounded-claim.js';
import type { HandleKind, SqlDriver } from './driver.js';
import { heldTransaction } from './held-transaction.js';
import { runStatements, SqlStateError, stateOf } from './source.js';

export interface OrmTransactionSettings<Handle> {
  readonly driver: SqlDriver<Handle>;
  /** The caller's open transaction to join with a savepoint; undefined opens one through the ORM. */
  readonly joined: Handle | undefined;
  readonly isolation: IsolationLevel | undefined;
  readonly lockTimeoutMs: number;
  readonly statements: Statements;
  readonly now: () => number | null;
  /** Reads the key's record outside the transaction (after a rollback): whether the claim's row is durable. */
  readonly durableClaim: (key: string, token: number) => Promise<boolean>;
}

// As in pg mode: a claim that keeps meeting rows committed while it ran starts over this often.
const MAX_CLAIM_ROUNDS = 8;
const BUSY_RETRY_AFTER_MS = 1_000;
// The ORM's own transaction clock (Prisma's interactive timeout, …) runs this much past the lease, so the lease's
// end, which rolls back on oncely's side, always comes first.
const TIMEOUT_MARGIN_MS = 5_000;
// SQLSTATE classes a COMMIT is refused with, the transaction rolled back: integrity (a deferred constraint) and
// transaction rollback (a serialization failure or deadlock found at commit).
const REFUSED_AT_COMMIT = /^(23|40)/;
const SAVEPOINT = 'SAVEPOINT oncely_claim';
const UNDO_SAVEPOINT = ['ROLLBACK TO SAVEPOINT oncely_claim', 'RELEASE SAVEPOINT oncely_claim'];
const RELEASE_SAVEPOINT = 'RELEASE SAVEPOINT oncely_claim';
// A lease end in a transaction oncely opened: one statement that fails. PostgreSQL aborts a transaction at its first
// error, at once: its writes are undone and its locks released (the claim's row too, so a retry may take over, as
// after a crash), and every later statement in it fails (25P02) until it is ended. So the holder's late writes fail
// instead of running outside the transaction and committing on their own, as they would once the ORM ended it.
const FENCE = ["SELECT 'oncely: the claim''s lease ended; this transaction takes no writes'::int"];
// How long a fenced transaction waits for its holder to settle before it is given back anyway (a holder that never
// returns must not keep a connection for ever): ten leases, at least a minute.
const fenceMsOf = (leaseMs: number) => Math.max(60_000, 10 * leaseMs);
// A savepoint undo that fails with these found no savepoint (3B001) or no transaction (25P01): the caller's
// transaction, which held it, was ended by the holder's code.
const SAVEPOINT_GONE = new Set(['3B001', '25P01']);

/** One unit of work on the ORM: statements on its handle, and how it ends. */
interface Unit<Handle> {
  readonly handle: Handle;
  run(statements: readonly string[]): Promise<Row[][]>;
  /** Ends it keeping the writes; rejects when the commit failed or its result is unknown. */
  keep(): Promise<void>;
  /** Ends it undoing the writes; true when it found that the holder's code had ended it already (an escape). */
  drop(): Promise<boolean>;
  /**
   * Fails the handle's transaction (PostgreSQL undoes it at once) but leaves it open, so a statement its holder sends
   * later fails instead of committing on its own; `drop` ends it. Never rejects.
   */
  fence(): Promise<void>;
}

/** `beginTransaction` for a store on an ORM: see the module's comment. */
export async function beginOrmTransaction<Handle>(
  settings: OrmTransactionSettings<Handle>,
  input: TransactionBeginInput,
): Promise<TransactionBeginResult> {
  const lockTimeoutMs = Math.ceil(Math.max(input.waitMs, settings.lockTimeoutMs));
  const busy: BeginResult = {
    kind: 'inProgress',
    retryAfterMs: Math.min(input.leaseMs, BUSY_RETRY_AFTER_MS),
    attempt: 1,
  };
  for (let round = 1; ; round++) {
    const unit = await openUnit(settings, input.leaseMs + TIMEOUT_MARGIN_MS, fenceMsOf(input.leaseMs));
    // One statement that bounds its own lock wait and reads the transaction id (bounded-claim.ts): one round trip on
    // every ORM, with the savepoint of joined mode in the same message where the ORM sends several at once.
    const claim = inlineParameters(
      boundedClaim(settings.statements.begin, lockTimeoutMs),
      beginValues(input, settings.now()),
    );
    const statements = settings.joined === undefined ? [claim] : [SAVEPOINT, claim];
    let result: BeginResult | 'stale';
    let xid: unknown;
    try {
      const results = await unit.run(statements);
      const row = results[results.length - 1]?.[0];
      result = beginResultOf(row);
      xid = row?.xid;
    } catch (error) {
      await unit.drop().catch(() => false);
      if (isLockNotAvailable(error)) return busy;
      if (isRetryableConflict(error) && settings.joined !== undefined) return busy;
      if (isRetryableConflict(error) && round < MAX_CLAIM_ROUNDS) continue;
      throw storeError('begin', error);
    }
    if (result !== 'stale' && result.kind === 'acquired') {
      if (typeof xid === 'string') {
        const held = { key: input.key, token: result.token, xid };
        return { ...result, transaction: ormTransaction(settings, unit, held) };
      }
      await unit.drop().catch(() => false);
      throw storeError('begin', new Error('the claim has no transaction id'));
    }
    await unit.drop().catch(() => false);
    if (result !== 'stale') return result;
    if (round === MAX_CLAIM_ROUNDS) return busy;
  }
}

/** A transaction the ORM opens for this claim, or a savepoint in the caller's. */
async function openUnit<Handle>(
  settings: OrmTransactionSettings<Handle>,
  timeoutMs: number,
  fenceMs: number,
): Promise<Unit<Handle>> {
  const { driver, joined } = settings;
  const kind: HandleKind<Handle> = driver.kind;
  const runOn = (handle: Handle) => (statements: readonly string[]) =>
    runStatements(kind, (list) => kind.run(handle, list), statements);
  if (joined !== undefined) return savepointUnit(joined, runOn(joined));
  let opened: Awaited<ReturnType<typeof heldTransaction<Handle>>>;
  try {
    opened = await heldTransaction(driver, { isolation: settings.isolation, timeoutMs });
  } catch (error) {
    throw storeError('begin', error);
  }
  const { handle, end } = opened;
  const run = runOn(handle);
  let ended = false;
  const drop = async () => {
    if (ended) return false;
    ended = true;
    await end(false).catch(() => {});
    return false;
  };
  return {
    handle,
    run,
    async keep() {
      ended = true;
      try {
        await end(true);
      } catch (error) {
        // The server refused the COMMIT (a deferred constraint, a serialization failure at commit): the transaction
        // rolled back, so nothing of it committed. Anything else (a connection lost under it) leaves it unknown.
        const state = stateOf(kind, error);
        if (state !== undefined && REFUSED_AT_COMMIT.test(state)) {
          const refused = 'refused by the server: nothing of it committed; a retry runs once more';
          throw storeError(`commit (${refused})`, new SqlStateError(state, error));
        }
        const unknown = 'whether it committed is unknown; a retry replays the outcome or runs once more';
        throw storeError(`commit (${unknown})`, error);
      }
    },
    drop,
    async fence() {
      // The last statement fails on purpose; a failure before it means the connection is gone, which fences too.
      await run(FENCE).catch(() => {});
      setTimeout(() => void drop(), fenceMs).unref();
    },
  };
}

function savepointUnit<Handle>(
  handle: Handle,
  run: (statements: readonly string[]) => Promise<Row[][]>,
): Unit<Handle> {
  return {
    handle,
    run,
    async keep() {
      try {
        await run([RELEASE_SAVEPOINT]);
      } catch (error) {
        throw storeError('release savepoint', error);
      }
    },
    // The caller's transaction is theirs: what their code writes after a lease end is theirs to commit or not.
    fence: async () => {},
    async drop() {
      try {
        await run(UNDO_SAVEPOINT);
        return false;
      } catch (error) {
        if (!SAVEPOINT_GONE.has((error as { code?: string }).code ?? '')) return false;
        // Nothing the holder's code opened after the escape stays open: it rolls back as a refused outcome's would.
        await run(['ROLLBACK']).catch(() => {});
        return true;
      }
    },
  };
}

interface Held {
  readonly key: string;
  readonly token: number;
  readonly xid: string;
}

function ormTransaction<Handle>(
  settings: OrmTransactionSettings<Handle>,
  unit: Unit<Handle>,
  held: Held,
): StoreTransaction {
  const { key, token } = held;
  let open = true;
  const close = () => {
    if (!open) return false;
    open = false;
    return true;
  };
  const escaped = () => new TransactionEscapedError(token);
  // Rolls back and tells whether the claim had escaped: a joined savepoint that is gone, or (own transaction) the
  // claim's row still there after the rollback, which only the holder's own COMMIT can have made durable.
  const dropChecked = async (): Promise<boolean> => {
    if (await unit.drop()) return true;
    if (settings.joined !== undefined) return false;
    return settings.durableClaim(key, token);
  };
  return {
    handle: unit.handle,
    // No driver-independent way to hear a connection drop: a lost connection fails the next statement instead.
    signal: new AbortController().signal,
    async commit(outcome: StoredOutcome, retentionMs: number): Promise<void> {
      if (!close()) throw new LeaseLostError(token, 'the transaction was settled already');
      const values = [...completeValues(key, token, outcome, retentionMs, settings.now()), held.xid];
      let row: Row | undefined;
      try {
        const results = await unit.run([inlineParameters(settings.statements.completeInTransaction, values)]);
        row = results[0]?.[0];
      } catch (error) {
        if (await dropChecked()) throw escaped();
        throw storeError('complete', error);
      }
      if (row?.held !== true) {
        await unit.drop();
        throw escaped();
      }
      if (row.key === null || row.key === undefined) {
        await unit.drop();
        throw new LeaseLostError(token);
      }
      await unit.keep();
    },
    async rollback(): Promise<void> {
      if (!close()) return;
      if (await dropChecked()) throw escaped();
    },
    async abort(): Promise<void> {
      if (!close()) return;
      if (settings.joined !== undefined) {
        if (await dropChecked()) throw escaped();
        return;
      }
      // The holder may still be writing through the handle. Ending the ORM's transaction would let those writes
      // run outside it, each committing on its own (Drizzle, postgres.js and Kysely's callback transactions send
      // them to the pooled connection), so the transaction is failed instead (FENCE) and ended once its holder is
      // done with the handle (`close`, or after ten leases at most).
      await unit.fence();
      if (await settings.durableClaim(key, token)) throw escaped();
    },
    async close(): Promise<void> {
      await unit.drop().catch(() => false);
    },
  };
}
