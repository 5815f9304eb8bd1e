// The checker: reads the effect ledger, the claim events, what the clients saw and the fault log, and counts
// violations of what the library promises. What "more than one effect" means depends on the store:
//
// Plain stores (Redis, Cluster, PostgreSQL plain): the effect is the ledger row the handler appends. The library
// cannot undo an effect, so an effect may legitimately run again when the claim it ran under was lost before its
// outcome was stored, and each such effect is classified, never silently forgiven:
//   - owner-killed: the server process running it was SIGKILLed before the claim settled;
//   - claim-lost: its complete (or a renewal) was fenced or its lease ran out (a stalled or partitioned owner);
//   - complete-unconfirmed: it ran on a live server during a store fault and the store never confirmed its
//     complete (the engine retried; docs/http.md: the client still gets the handler's answer).
// Every other effect is a "live" effect (completed, released, or unsettled outside any fault), and a key with
// two live effects is a violation. So are two accepted completes on one key, whatever the faults.
//
// Transactional mode (postgres-tx, and the ORM kinds postgres-kysely, -drizzle, -prisma): the effect is a committed
// row of the business table, written through the claim's transaction (pg's or the ORM's). Exactly one per key
// that any client saw succeed, never two, no exceptions; attempts that rolled back are reported.
//
// For every store: every 2xx body a client saw names the token of an effect of that key; a key's 2xx bodies are
// byte-identical (on a plain store, bodies of complete-unconfirmed executions are the one documented exception);
// no 5xx other than 503; no 4xx (clients never reuse a key with another body); no effect without a claim; no
// effect under a token the store never granted; every operation ends.
import type { EventRow, ExecutionRow, PaymentRow } from './ledger.js';
import {
  type ClientResult,
  type FaultRecord,
  isTransactional,
  type NotableAnswer,
  type StoreKind,
} from './types.js';

export interface ProcessRecord {
  readonly pid: number;
  readonly server: string;
  readonly startedAt: number;
  endedAt: number | null;
  killed: boolean;
}

export interface CheckInput {
  readonly kind: StoreKind;
  readonly executions: readonly ExecutionRow[];
  readonly payments: readonly PaymentRow[];
  readonly events: readonly EventRow[];
  readonly clients: readonly ClientResult[];
  /** The late retry of every key after the faults. */
  readonly final: ClientResult;
  readonly faults: readonly FaultRecord[];
  readonly processes: readonly ProcessRecord[];
  /** App servers that exited without being killed by a fault. */
  readonly crashes: ReadonlyArray<{ readonly server: string; readonly pid: number; readonly exit: string }>;
  readonly leaseMs: number;
  readonly storeTimeoutMs: number;
}

export interface Check {
  readonly name: string;
  readonly description: string;
  count: number;
  readonly examples: unknown[];
}

export type EffectClass =
  | 'completed'
  | 'owner-killed'
  | 'claim-lost'
  | 'complete-unconfirmed'
  | 'released'
  | 'unsettled';

export interface CheckResult {
  readonly checks: Check[];
  readonly violations: number;
  readonly keysUsed: number;
  readonly executions: number;
  /** Plain stores: effects per class; transactional: committed and rolled-back attempts. */
  readonly effects: Record<string, number>;
  /** Keys with more than one effect, and how many of those are explained by a lost claim. */
  readonly keysWithReruns: number;
  readonly notes: string[];
}

const EXAMPLES = 5;

function slot<K, V>(map: Map<K, V>, key: K, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}

export function check(input: CheckInput): CheckResult {
  const checks = new Map<string, Check>();
  const define = (name: string, description: string) =>
    checks.set(name, { name, description, count: 0, examples: [] });
  const fail = (name: string, example: unknown) => {
    const entry = checks.get(name)!;
    entry.count++;
    if (entry.examples.length < EXAMPLES) entry.examples.push(example);
  };
  const transactional = isTransactional(input.kind);
  define(
    'duplicate-live-effects',
    transactional
      ? 'keys with more than one committed effect'
      : 'keys with two or more effects from claims that were not lost (completed, released, or unsettled outside a fault)',
  );
  define('two-completes', 'keys on which the store accepted two completes (two different tokens)');
  define(
    'stale-complete-accepted',
    'keys whose outcome was stored under a token lower than one the store had granted on that key (fencing broken)',
  );
  define(
    '2xx-without-effect',
    transactional
      ? 'keys for which a client saw a 2xx whose token has no committed effect'
      : 'keys for which a client saw a 2xx whose token has no effect in the ledger',
  );
  define(
    '2xx-bodies-differ',
    transactional
      ? 'keys whose 2xx bodies differ'
      : 'keys whose 2xx bodies differ, beyond bodies of executions whose complete the store never confirmed',
  );
  define(
    'confirmed-complete-lost',
    'keys a failover set back although a complete on them had been confirmed (Sentinel: `durable`, on every replica)',
  );
  define('5xx-not-503', 'answers with a 5xx status other than 503 (handler or library failures)');
  define('unexpected-4xx', 'answers 400/422/…: the clients never reuse a key with another body');
  define('effect-without-claim', 'effects recorded with no idempotency context (no token)');
  define('effect-without-grant', 'effects under a token no acquired/takeover event granted (live servers)');
  define('app-server-crashed', 'app server processes that died without a fault killing them');
  define('operation-gave-up', 'operations with no final answer within the time limit');
  define('final-replay-missing', 'keys for which the late retry after the faults got no 2xx');

  // When each killed process died (a crash: at some unknown time, so any time).
  const killedAt = new Map<number, number>();
  for (const fault of input.faults) for (const pid of fault.killedPids) killedAt.set(pid, fault.startedAt);
  for (const crash of input.crashes) {
    killedAt.set(crash.pid, Number.NEGATIVE_INFINITY);
    fail('app-server-crashed', crash);
  }
  const killed = new Set(killedAt.keys());
  const eventsOf = new Map<string, EventRow[]>();
  const granted = new Set<string>();
  const grantsOf = new Map<string, number[]>();
  const completesOf = new Map<string, number[]>();
  for (const event of input.events) {
    const id = `${event.id}:${event.token}`;
    slot(eventsOf, id, () => []).push(event);
    if (event.type === 'acquired' || event.type === 'takeover') {
      granted.add(id);
      slot(grantsOf, event.id, () => []).push(event.token!);
    }
    if (event.type === 'completed') slot(completesOf, event.id, () => []).push(event.token!);
  }
  // Sentinel: Redis replicates asynchronously, so a failover can lose a record the old master held and the
  // promoted replica never got (docs/stores/redis.md#sentinel-failover-and-what-can-be-lost). The store then
  // forgets the key: a second fresh claim (attempt 1, not a takeover) of the same id, across a failover. Such keys
  // are classified and reported (their retries run again), not counted as violations; a key forgotten with no
  // failover in between is not exempted.
  const failovers = input.faults.filter((fault) => fault.kind === 'failover');
  const freshClaims = new Map<string, number[]>();
  for (const event of input.events)
    if (event.type === 'acquired' && event.detail === '1')
      slot(freshClaims, event.id, () => []).push(event.at);
  const forgotten = new Set<string>();
  for (const [id, ats] of freshClaims)
    for (let i = 1; i < ats.length; i++)
      if (failovers.some((fault) => ats[i - 1]! < fault.endedAt && ats[i]! > fault.startedAt))
        forgotten.add(id);
  // A completed record is never claimed again (its retention outlives the run, and every store here keeps what it
  // acknowledged), so a grant above a completed token means the store accepted a complete from a stale claim.
  for (const [id, completed] of completesOf) {
    const highest = Math.max(...(grantsOf.get(id) ?? []));
    for (const token of completed)
      if (highest > token && !forgotten.has(id))
        fail('stale-complete-accepted', { id, completed: token, granted: grantsOf.get(id) });
  }
  const storeWindows = input.faults
    .filter((fault) => fault.storeFault)
    .map(
      (fault) => [fault.startedAt - input.leaseMs, fault.endedAt + 4 * input.storeTimeoutMs + 2_000] as const,
    );
  const inStoreFault = (at: number) => storeWindows.some(([from, to]) => at >= from && at <= to);
  // When an execution's complete was sent: right after its effect, unless its process was stopped (SIGSTOP)
  // in between, in which case when it was resumed.
  const stalls = input.faults.filter((fault) => fault.kind === 'server-stall');
  const completeSentAt = (row: ExecutionRow) => {
    for (const stall of stalls)
      if (
        stall.stalledPids.includes(row.pid) &&
        row.at <= stall.endedAt &&
        row.at >= stall.startedAt - input.leaseMs
      )
        return stall.endedAt;
    return row.at;
  };
  // Killed before its claim could settle: after the effect, and before its complete (sent right after it) and
  // the retries the engine gives a failing one could be over, the lease included. A process killed later was
  // not why an earlier execution of it went unsettled (a complete the store never confirmed, say).
  const killedWhileHeld = (row: ExecutionRow) => {
    const at = killedAt.get(row.pid);
    if (at === undefined) return false;
    if (at === Number.NEGATIVE_INFINITY) return true;
    return at <= completeSentAt(row) + input.leaseMs + 4 * input.storeTimeoutMs;
  };
  const anyWindows = input.faults.map(
    (fault) =>
      [fault.startedAt - input.leaseMs, fault.endedAt + input.leaseMs + 4 * input.storeTimeoutMs] as const,
  );
  const inAnyFault = (at: number) => anyWindows.some(([from, to]) => at >= from && at <= to);

  const executionsByKey = new Map<string, ExecutionRow[]>();
  for (const row of input.executions) {
    if (row.token === null) {
      fail('effect-without-claim', row);
      continue;
    }
    slot(executionsByKey, row.key, () => []).push(row);
    if (!killed.has(row.pid) && !granted.has(`${row.id}:${row.token}`)) fail('effect-without-grant', row);
  }
  const paymentsByKey = new Map<string, PaymentRow[]>();
  for (const row of input.payments) {
    slot(paymentsByKey, row.key, () => []).push(row);
  }

  // What the clients saw, per key: every distinct 2xx body with the token it names, and when it was first seen.
  const seen = new Map<
    string,
    Map<string, { token: number | null; count: number; final: boolean; firstAt: number }>
  >();
  for (const result of [...input.clients, input.final]) {
    const final = result === input.final;
    for (const [key, entry] of Object.entries(result.keys)) {
      const bodies = slot(seen, key, () => new Map());
      for (const body of entry.bodies) {
        const known = bodies.get(body.digest);
        if (known === undefined)
          bodies.set(body.digest, { token: body.token, count: body.count, final, firstAt: body.firstAt });
        else {
          known.count += body.count;
          known.firstAt = Math.min(known.firstAt, body.firstAt);
        }
      }
    }
  }

  const classes: Record<string, number> = {};
  const notes: string[] = [];
  let keysWithReruns = 0;
  let claimLostOutsideFaults = 0;
  const lostInFailover: { key: string; bodies: number; effects: unknown[] }[] = [];
  const keys = new Set([...executionsByKey.keys(), ...paymentsByKey.keys(), ...seen.keys()]);
  for (const key of keys) {
    const executions = executionsByKey.get(key) ?? [];
    const bodies = seen.get(key) ?? new Map();
    const classOf = new Map<number, EffectClass>();
    if (transactional) {
      const committed = paymentsByKey.get(key) ?? [];
      classes.committed = (classes.committed ?? 0) + committed.length;
      classes['rolled-back attempts'] =
        (classes['rolled-back attempts'] ?? 0) + Math.max(0, executions.length - committed.length);
      if (committed.length > 1) fail('duplicate-live-effects', { key, committed });
      if (executions.length > 1) keysWithReruns++;
      const tokens = new Set(committed.map((row) => row.token));
      const unbacked = [...bodies.values()].filter((body) => body.token === null || !tokens.has(body.token));
      if (unbacked.length > 0)
        fail('2xx-without-effect', {
          key,
          tokens: unbacked.map((body) => body.token),
          committed: [...tokens],
        });
      if (bodies.size > 1) fail('2xx-bodies-differ', { key, bodies: [...bodies.values()] });
    } else {
      for (const row of executions) {
        const events = eventsOf.get(`${row.id}:${row.token}`) ?? [];
        const has = (type: string, details?: readonly string[]) =>
          events.some((e) => e.type === type && (details === undefined || details.includes(e.detail)));
        let verdict: EffectClass;
        if (has('completed')) verdict = 'completed';
        else if (killedWhileHeld(row) && !has('released')) verdict = 'owner-killed';
        else if (has('leaseLost') || has('fenced', ['complete', 'renew'])) {
          verdict = 'claim-lost';
          if (!inAnyFault(row.at)) claimLostOutsideFaults++;
        } else if (has('released')) verdict = 'released';
        else if (inStoreFault(completeSentAt(row))) verdict = 'complete-unconfirmed';
        else verdict = 'unsettled';
        classOf.set(row.token!, verdict);
        classes[verdict] = (classes[verdict] ?? 0) + 1;
      }
      if (executions.length > 1) keysWithReruns++;
      // Set back by a failover: the store forgot the key (above), or granted a claim across a failover above a
      // token clients had already seen in a 2xx (the completion the old master held was lost).
      const grantAt = (row: ExecutionRow) =>
        (eventsOf.get(`${row.id}:${row.token}`) ?? []).find(
          (e) => e.type === 'acquired' || e.type === 'takeover',
        )?.at ?? row.at;
      const completionLost = [...bodies.values()].some(
        (body) =>
          body.token !== null &&
          executions.some(
            (row) =>
              row.token! > body.token! &&
              failovers.some((fault) => body.firstAt < fault.endedAt && grantAt(row) > fault.startedAt),
          ),
      );
      if (completionLost || executions.some((row) => row.id !== null && forgotten.has(row.id))) {
        // What `durable` promises: a complete it confirmed survives the failover, so only the newest execution
        // of a set-back key may have a confirmed complete.
        const newest = Math.max(...executions.map((row) => row.token!));
        if (executions.some((row) => row.token !== newest && classOf.get(row.token!) === 'completed'))
          fail('confirmed-complete-lost', {
            key,
            effects: executions.map((row) => ({ token: row.token, class: classOf.get(row.token!) })),
          });
        lostInFailover.push({
          key,
          bodies: bodies.size,
          effects: executions.map((row) => ({
            token: row.token,
            class: classOf.get(row.token!),
            at: row.at,
          })),
        });
        continue;
      }
      const live = executions.filter((row) => {
        const verdict = classOf.get(row.token!);
        return verdict === 'completed' || verdict === 'released' || verdict === 'unsettled';
      });
      if (live.length > 1)
        fail('duplicate-live-effects', {
          key,
          effects: executions.map((row) => ({ ...row, class: classOf.get(row.token!) })),
        });
      const completed = executions.filter((row) => classOf.get(row.token!) === 'completed');
      if (new Set(completed.map((row) => row.token)).size > 1)
        fail('two-completes', { key, tokens: completed.map((row) => row.token) });
      const tokens = new Set(executions.map((row) => row.token));
      const unbacked = [...bodies.values()].filter((body) => body.token === null || !tokens.has(body.token));
      if (unbacked.length > 0)
        fail('2xx-without-effect', { key, tokens: unbacked.map((body) => body.token), effects: [...tokens] });
      const firm = [...bodies.values()].filter(
        (body) => body.token === null || classOf.get(body.token) !== 'complete-unconfirmed',
      );
      if (firm.length > 1 || (firm.length === 0 && bodies.size > 1))
        fail('2xx-bodies-differ', {
          key,
          bodies: [...bodies.values()].map((body) => ({
            ...body,
            class: body.token === null ? undefined : classOf.get(body.token),
          })),
        });
    }
  }

  const notable: NotableAnswer[] = [...input.clients, input.final].flatMap((result) => result.notable);
  for (const answer of notable) {
    if (answer.status >= 500) fail('5xx-not-503', { ...answer, duringStoreFault: inStoreFault(answer.at) });
    else fail('unexpected-4xx', answer);
  }
  for (const result of [...input.clients, input.final])
    for (const gave of result.gaveUp) fail('operation-gave-up', gave);
  const finalKeys = new Set(Object.keys(input.final.keys));
  for (const key of keys)
    if (!finalKeys.has(key) && (executionsByKey.has(key) || paymentsByKey.has(key)))
      fail('final-replay-missing', { key });
  if (lostInFailover.length > 0) {
    classes['keys set back by a failover'] = lostInFailover.length;
    classes['of which two 2xx bodies'] = lostInFailover.filter((entry) => entry.bodies > 1).length;
    notes.push(
      `${lostInFailover.length} key(s) that a failover set back (the promoted replica did not have their completed record, or had no record at all): their retries ran the handler again, and for ${lostInFailover.filter((entry) => entry.bodies > 1).length} of them clients saw two different 2xx bodies (a replay served by the old master before the failover, then the new execution's). Examples: ${JSON.stringify(lostInFailover.slice(0, 3))}`,
    );
  }
  const ended = input.events.filter((event) => event.type === 'client-ended').length;
  if (ended > 0)
    notes.push(
      `ioredis ended an app server's Sentinel connection for good ${ended} time(s) during failovers (status \`end\`: no more retries); the app servers connect again on \`end\` (proof/sentinel.ts), without which the store would have answered 503 until a restart`,
    );
  if (claimLostOutsideFaults > 0)
    notes.push(
      `${claimLostOutsideFaults} claim(s) were lost outside any fault window (an owner slower than its lease on the loaded machine)`,
    );
  const list = [...checks.values()];
  return {
    checks: list,
    violations: list.reduce((sum, entry) => sum + entry.count, 0),
    keysUsed: keys.size,
    executions: input.executions.length,
    effects: classes,
    keysWithReruns,
    notes,
  };
}
