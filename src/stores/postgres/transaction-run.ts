/**
 * @module Transactional mode's claim and its end: `BEGIN; claim` sent as one message with a bounded lock wait, the
 * connection held with its transaction open while the user's code runs, then `complete; COMMIT` or a rollback, each
 * at most once.
 */
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
import { beginResultOf, beginValues, completeValues, type Row } from './rows.js';
import type { PostgresRuntime } from './runtime.js';
import { inlineParameters, type SqlValue } from './sql.js';
import { CLAIM_XID, escapedBeforeAbort, rollBackChecked, undoEscaped } from './transaction-escape.js';
import {
  finish,
  type IsolationLevel,
  type Session,
  savepointScope,
  transactionScope,
  undo,
} from './transaction-session.js';
import { watchTransaction } from './transaction-watch.js';

export type { IsolationLevel } from './transaction-session.js';

export interface TransactionSettings {
  /** The caller's open transaction to join (savepoint), or undefined to start one on a pooled client. */
  readonly joined: Client | PoolClient | undefined;
  readonly isolation: IsolationLevel;
  readonly lockTimeoutMs: number;
  /** NOTIFY at commit, for plain-mode waiters on the same keys (transactional duplicates wait on the row). */
  readonly notify: boolean;
}

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
    const { result: claim, xid } = await claimKey(runtime, session, settings, input);
    if (claim.kind !== 'acquired') return claim;
    handedOut = true;
    const held = { key: input.key, token: claim.token, xid };
    const transaction = openTransaction(runtime, settings, session, held, controller.signal, giveBack);
    return { ...claim, transaction };
  } finally {
    if (!handedOut) giveBack();
  }
}

/** What the open transaction holds: the key, the claim's token, and the id of the transaction it was written in. */
interface Held {
  readonly key: string;
  readonly token: number;
  readonly xid: string;
}

/** The open transaction of an acquired claim: settled once, then the connection goes back to the pool. */
function openTransaction(
  runtime: PostgresRuntime,
  settings: TransactionSettings,
  session: Session,
  held: Held,
  signal: AbortSignal,
  giveBack: () => void,
): StoreTransaction {
  const { key, token } = held;
  let open = true;
  const watch = watchTransaction(session.client);
  const close = () => {
    if (!open) return false;
    open = false;
    watch.stop();
    return true;
  };
  // The holder's code ended the claim's transaction itself (transaction-escape.ts). Nothing is written here: the
  // core's claim records the escape through Store.complete, which tells by its fence whether the escape committed
  // the claim (the key then keeps the failure) or rolled it back (the key is free). The caller learns it loudly,
  // so the bug shows on the first request and not as a double effect.
  const escaped = () => new TransactionEscapedError(token);
  return {
    handle: session.client,
    signal,
    async commit(outcome: StoredOutcome, retentionMs: number): Promise<void> {
      if (!close()) throw new LeaseLostError(token, 'the transaction was settled already');
      try {
        if (watch.escaped) {
          await undoEscaped(session);
          throw escaped();
        }
        const values = [...completeValues(key, token, outcome, retentionMs, runtime.now()), held.xid];
        const { completeInTransaction } = settings.notify ? runtime.statements : runtime.quiet;
        let row: Row | undefined;
        try {
          [row] = await runtime.rows('complete', completeInTransaction, values, session.client);
        } catch (error) {
          // A failed transaction (25P02) may be one the holder began after an escape: the record tells.
          if (await rollBackChecked(runtime, session, key, token)) throw escaped();
          throw error;
        }
        if (row?.held !== true) {
          await undoEscaped(session);
          throw escaped();
        }
        if (row.key === null) {
          // The transaction holds the row it claimed, so this cannot happen short of a bug: refuse to commit.
          await undo(session);
          throw new LeaseLostError(token);
        }
        await finish(session);
      } finally {
        giveBack();
      }
    },
    async rollback(): Promise<void> {
      if (!close()) return;
      try {
        // Both: a nested BEGIN (watched) escapes nothing yet, and AND CHAIN is seen only by the check.
        const found = await rollBackChecked(runtime, session, key, token);
        if (found || watch.escaped) throw escaped();
      } finally {
        giveBack();
      }
    },
    async abort(): Promise<void> {
      if (!close()) return;
      // Joined: the caller's transaction is theirs to end; undo our savepoint and leave it to them, with our
      // listeners taken off their client (a long-lived client would gather them, one pair per lease end). The
      // undo fails when the holder's code ended the caller's transaction: the claim escaped with it.
      if (settings.joined !== undefined) {
        let found: boolean;
        try {
          found = await rollBackChecked(runtime, session, key, token);
        } finally {
          giveBack();
        }
        if (found || watch.escaped) throw escaped();
        return;
      }
      // Closing the connection rolls the transaction back on the server, and the handle can never write again: a
      // statement its holder sends later fails instead of autocommitting outside the claim, or running inside
      // another request's transaction on a reused connection.
      session.broken = true;
      giveBack();
      // Nothing of ours ever committed, so a record that carries the claim's token was made durable by the holder's
      // own COMMIT (of any form): left in progress, its lease would end and a takeover run the effect again. One
      // read, on a lease end only.
      if (await escapedBeforeAbort(runtime, key, token)) throw escaped();
    },
  };
}

/** What a claim found, and the id of its transaction when it acquired the key (empty otherwise). */
interface Claimed {
  readonly result: BeginResult;
  readonly xid: string;
}

/**
 * `open; claim` in one message, with the lock wait bounded; the scope stays open only when acquired. The message
 * also reads the claim's transaction id, which the outcome's statement compares (transaction-escape.ts).
 */
async function claimKey(
  runtime: PostgresRuntime,
  session: Session,
  settings: TransactionSettings,
  input: TransactionBeginInput,
): Promise<Claimed> {
  const { leaseMs } = input;
  const lockTimeoutMs = Math.ceil(Math.max(input.waitMs, settings.lockTimeoutMs));
  const busy = {
    result: { kind: 'inProgress', retryAfterMs: Math.min(leaseMs, BUSY_RETRY_AFTER_MS), attempt: 1 },
    xid: '',
  } as const;
  for (let round = 1; ; round++) {
    const values = beginValues(input, runtime.now());
    const claim = claimStatements(runtime, session.client, values);
    // The lock timeout covers the claim only: the user's statements run under the setting they had before.
    const script = [
      session.scope.open,
      `SELECT set_config('oncely.lock_timeout', current_setting('lock_timeout'), true), set_config('lock_timeout', '${lockTimeoutMs}ms', true)`,
      ...claim.statements,
      `SELECT set_config('lock_timeout', current_setting('oncely.lock_timeout'), true), ${CLAIM_XID}`,
    ].join(';\n');
    let result: BeginResult | 'stale';
    let xid: unknown;
    try {
      const results = await runtime.script(session.client, script);
      claim.prepared(true);
      result = beginResultOf(results[results.length - 2]?.[0]);
      xid = results[results.length - 1]?.[0]?.xid;
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
    if (result !== 'stale' && result.kind === 'acquired') {
      if (typeof xid === 'string') return { result, xid };
      // An acquiring claim writes its row, which assigns the id: without one, no escape could be told apart.
      await undo(session);
      throw storeError('begin', new Error('the claim has no transaction id'));
    }
    await undo(session);
    if (session.broken)
      throw new StoreUnavailableError('postgres begin: the connection broke while rolling back');
    if (result !== 'stale') return { result, xid: '' };
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
  const execute = inlineParameters(`EXECUTE ${name}($1, $2, $3, $4, $5, $6)`, values);
  return {
    statements: names.has(name)
      ? [execute]
      : [`PREPARE ${name}(text, text, bigint, bigint, bigint, text) AS ${begin}`, execute],
    prepared: (yes: boolean) => (yes ? names.add(name) : names.delete(name)),
  };
}
