import type { Client, PoolClient } from 'pg';
import { LeaseLostError, StoreUnavailableError, TransactionEscapedError } from '../../core/errors.js';
import type {
  BeginResult,
  StoredOutcome,
  StoreTransaction,
  TransactionBeginInput,
  TransactionBeginResult,
} from '../../core/store.js';
import { isLockNotAvailable, isRetryableConflict, sqlStateOf, storeError } from './errors.js';
import { beginResultOf, completeValues } from './rows.js';
import type { PostgresRuntime } from './runtime.js';
import { inlineParameters, type SqlValue } from './sql.js';
import { watchTransaction } from './transaction-watch.js';

export type IsolationLevel = 'read committed' | 'repeatable read' | 'serializable';

export interface TransactionSettings {
  /** The caller's open transaction to join (savepoint), or undefined to start one on a pooled client. */
  readonly joined: Client | PoolClient | undefined;
  readonly isolation: IsolationLevel;
  readonly lockTimeoutMs: number;
  /** NOTIFY at commit, for plain-mode waiters on the same keys (transactional duplicates wait on the row). */
  readonly notify: boolean;
}

/** How a unit of work opens, undoes and finishes: a whole transaction of ours, or a savepoint in the caller's. */
interface Scope {
  readonly open: string;
  readonly undo: string;
  readonly finish: string;
}

const savepointScope: Scope = {
  open: 'SAVEPOINT oncely_claim',
  undo: 'ROLLBACK TO SAVEPOINT oncely_claim; RELEASE SAVEPOINT oncely_claim',
  finish: 'RELEASE SAVEPOINT oncely_claim',
};

const transactionScope = (isolation: IsolationLevel): Scope => ({
  open: `BEGIN ISOLATION LEVEL ${isolation.toUpperCase()}`,
  undo: 'ROLLBACK',
  finish: 'COMMIT',
});

// A claim that keeps meeting rows committed while it ran (or serialization failures) starts over this often.
const MAX_CLAIM_ROUNDS = 8;
// What a duplicate is told when the key is held by a transaction whose lease it cannot see (uncommitted).
const BUSY_RETRY_AFTER_MS = 1_000;

// Which connections have the claim prepared at the SQL level (PREPARE lasts for the session, through rollbacks),
// by backend pid where the client tells it, so wrappers around one connection share what it knows. A wrong
// guess costs one retry: PostgreSQL answers 42P05 (prepared already) or 26000 (not prepared).
const preparedByPid = new Map<number, Set<string>>();
const preparedByClient = new WeakMap<object, Set<string>>();

function preparedOn(client: object): Set<string> {
  const pid = (client as { processID?: unknown }).processID;
  const known = typeof pid === 'number' ? preparedByPid.get(pid) : preparedByClient.get(client);
  if (known !== undefined) return known;
  const names = new Set<string>();
  // Pids are reused as connections come and go; forgetting them all now and then bounds the map.
  if (preparedByPid.size >= 10_000) preparedByPid.clear();
  if (typeof pid === 'number') preparedByPid.set(pid, names);
  else preparedByClient.set(client, names);
  return names;
}

interface Session {
  readonly client: Client | PoolClient;
  readonly scope: Scope;
  broken: boolean;
}

/**
 * Transactional mode (see `Store.beginTransaction`). Round trips for a new key: `BEGIN; claim` as ONE message,
 * the user's statements, `complete`, `COMMIT` — one more than the user's transaction alone. A duplicate of an
 * open transaction blocks on its uncommitted row (up to `lock_timeout`), then sees the committed outcome. The
 * connection stays checked out, with the transaction open, until the claim commits or rolls back.
 */
export async function beginTransaction(
  runtime: PostgresRuntime,
  settings: TransactionSettings,
  input: TransactionBeginInput,
): Promise<TransactionBeginResult> {
  const scope = settings.joined ? savepointScope : transactionScope(settings.isolation);
  const controller = new AbortController();
  let session: Session | undefined;
  let lostEarly = false;
  // A checked-out pg client that loses its connection emits 'error', which would crash the process unheard; the
  // pool's client gets this listener in the hand-over itself (see checkout.ts).
  const onLost = (error?: unknown) => {
    if (session === undefined) lostEarly = true;
    else session.broken = true;
    controller.abort(new StoreUnavailableError('the transaction connection was lost', { cause: error }));
  };
  const client = settings.joined ?? (await runtime.connect(onLost));
  session = { client, scope, broken: lostEarly };
  if (settings.joined !== undefined) client.on('error', onLost);
  client.on('end', onLost);
  let handedOut = false;
  const giveBack = () => {
    client.off('error', onLost);
    client.off('end', onLost);
    if (settings.joined === undefined) (client as PoolClient).release(session.broken);
  };
  try {
    const claim = await claimKey(runtime, session, settings, input);
    if (claim.kind !== 'acquired') return claim;
    handedOut = true;
    return {
      ...claim,
      transaction: openTransaction(
        runtime,
        settings,
        session,
        input.key,
        claim.token,
        controller.signal,
        giveBack,
      ),
    };
  } finally {
    if (!handedOut) giveBack();
  }
}

/** The open transaction of an acquired claim: settled once, then the connection goes back to the pool. */
function openTransaction(
  runtime: PostgresRuntime,
  settings: TransactionSettings,
  session: Session,
  key: string,
  token: number,
  signal: AbortSignal,
  giveBack: () => void,
): StoreTransaction {
  let open = true;
  const watch = watchTransaction(session.client);
  const close = () => {
    if (!open) return false;
    open = false;
    watch.stop();
    return true;
  };
  // The holder's code ended the claim's transaction itself: whatever is still open on the connection is undone,
  // the claim's row (committed by that COMMIT as in progress) is released under its token in a statement of its
  // own, and the caller learns it loudly, so the bug shows on the first request and not as a double effect.
  const refuseEscaped = async (): Promise<never> => {
    try {
      await undo(session);
      const values = [key, token, runtime.now()];
      await runtime.rows('release', runtime.statements.release, values, session.client);
    } catch {
      session.broken = true;
    } finally {
      giveBack();
    }
    throw new TransactionEscapedError(token);
  };
  return {
    handle: session.client,
    signal,
    async commit(outcome: StoredOutcome, retentionMs: number): Promise<void> {
      if (!close()) throw new LeaseLostError(token, 'the transaction was settled already');
      if (watch.escaped) return refuseEscaped();
      try {
        const values = completeValues(key, token, outcome, retentionMs, runtime.now());
        try {
          const { complete } = settings.notify ? runtime.statements : runtime.quiet;
          const rows = await runtime.rows('complete', complete, values, session.client);
          // The transaction holds the row it claimed, so this cannot happen short of a bug: refuse to commit.
          if (rows.length !== 1) throw new LeaseLostError(token);
        } catch (error) {
          await undo(session);
          throw error;
        }
        await finish(session);
      } finally {
        giveBack();
      }
    },
    async rollback(): Promise<void> {
      if (!close()) return;
      if (watch.escaped) return refuseEscaped();
      try {
        await undo(session);
      } finally {
        giveBack();
      }
    },
    async abort(): Promise<void> {
      if (!close()) return;
      // Joined: the caller's transaction is theirs to end; undo our savepoint and leave it to them, with our
      // listeners taken off their client (a long-lived client would gather them, one pair per lease end).
      if (settings.joined !== undefined) {
        await undo(session);
        giveBack();
        return;
      }
      // Closing the connection rolls the transaction back on the server, and the handle can never write again: a
      // statement its holder sends later fails instead of autocommitting outside the claim, or running inside
      // another request's transaction on a reused connection.
      session.broken = true;
      giveBack();
    },
  };
}

/** `open; claim` in one message, with the lock wait bounded; the scope stays open only when acquired. */
async function claimKey(
  runtime: PostgresRuntime,
  session: Session,
  settings: TransactionSettings,
  input: TransactionBeginInput,
): Promise<BeginResult> {
  const { key, fingerprint, leaseMs, retentionMs } = input;
  const lockTimeoutMs = Math.ceil(Math.max(input.waitMs, settings.lockTimeoutMs));
  const busy = {
    kind: 'inProgress',
    retryAfterMs: Math.min(leaseMs, BUSY_RETRY_AFTER_MS),
    attempt: 1,
  } as const;
  for (let round = 1; ; round++) {
    const values = [key, fingerprint, leaseMs, retentionMs, runtime.now()];
    const claim = claimStatements(runtime, session.client, values);
    // The lock timeout covers the claim only: the user's statements run under the setting they had before.
    const script = [
      session.scope.open,
      `SELECT set_config('oncely.lock_timeout', current_setting('lock_timeout'), true), set_config('lock_timeout', '${lockTimeoutMs}ms', true)`,
      ...claim.statements,
      `SELECT set_config('lock_timeout', current_setting('oncely.lock_timeout'), true)`,
    ].join(';\n');
    let result: BeginResult | 'stale';
    try {
      const results = await runtime.script(session.client, script);
      claim.prepared(true);
      result = beginResultOf(results[results.length - 2]?.[0]);
    } catch (error) {
      await undo(session);
      if (session.broken) throw storeError('begin', error);
      const state = sqlStateOf(error);
      // 42P05: prepared already (an earlier message failed after its PREPARE); 26000: the session lost it.
      if (state === '42P05' || state === '26000') claim.prepared(state === '42P05');
      // These come from the claim itself, so the PREPARE before it in the message went through.
      if (isLockNotAvailable(error) || isRetryableConflict(error)) claim.prepared(true);
      if (isLockNotAvailable(error)) return busy;
      // A serialization failure inside the caller's transaction would repeat on every try: their retry decides.
      if (isRetryableConflict(error) && settings.joined !== undefined) return busy;
      const retry = isRetryableConflict(error) || state === '42P05' || state === '26000';
      if (retry && round < MAX_CLAIM_ROUNDS) continue;
      throw storeError('begin', error);
    }
    if (result !== 'stale' && result.kind === 'acquired') return result;
    await undo(session);
    if (session.broken)
      throw new StoreUnavailableError('postgres begin: the connection broke while rolling back');
    if (result !== 'stale') return result;
    // Under repeatable read a joined transaction's snapshot never sees the row that decided: the caller retries.
    if (round === MAX_CLAIM_ROUNDS) return busy;
  }
}

/**
 * The claim as statements of a simple-query message (which takes no parameters, so values are inlined as
 * literals): `EXECUTE` of a statement this connection prepared once (PREPARE rides along the first time), or
 * the statement itself when `prepare` is off.
 */
function claimStatements(runtime: PostgresRuntime, client: object, values: readonly SqlValue[]) {
  const { begin } = runtime.statements;
  if (!runtime.prepare) return { statements: [inlineParameters(begin, values)], prepared: () => {} };
  const name = runtime.nameOf(begin, 'sql');
  const names = preparedOn(client);
  const execute = inlineParameters(`EXECUTE ${name}($1, $2, $3, $4, $5)`, values);
  return {
    statements: names.has(name)
      ? [execute]
      : [`PREPARE ${name}(text, text, bigint, bigint, bigint) AS ${begin}`, execute],
    prepared: (yes: boolean) => (yes ? names.add(name) : names.delete(name)),
  };
}

async function undo(session: Session): Promise<void> {
  try {
    await session.client.query(session.scope.undo);
  } catch {
    // The connection is gone or unusable; the server rolls the transaction back when it notices.
    session.broken = true;
  }
}

async function finish(session: Session): Promise<void> {
  try {
    const result = await session.client.query(session.scope.finish);
    if (result.command === 'ROLLBACK')
      throw new Error('COMMIT answered ROLLBACK: the transaction had failed');
  } catch (error) {
    session.broken = true;
    const unknown = 'whether it committed is unknown; a retry replays the outcome or runs once more';
    throw storeError(`commit (${unknown})`, error);
  }
}
