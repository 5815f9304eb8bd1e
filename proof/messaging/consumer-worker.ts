// A consumer process of the messaging proof: the broker's `consumeIdempotently` helper with an inbox in
// transactional mode on PostgreSQL (docs/messaging/inbox.md#transactional-mode-postgresql): the claim of the
// message, the handler's effect and the stored outcome commit together. The effect is a row of the effect ledger
// written through that transaction; a consumer killed mid-handler leaves neither.
//
// The handler applies a key's events in commit order, as a consumer of ordered events must: the broker may hand
// it event n+1 of a key before event n's effect committed (concurrent handlers, a redelivery after a crash), and
// then the handler fails, so the message comes back later. It never refuses an event already applied: a
// duplicate would be a second row, counted by the checker, not hidden by the handler.
//
// Answers `status` with how many handlers wrote their effect and are not settled yet (so the orchestrator can
// SIGKILL it mid-handler), and reports its counts every 250 ms.
import pg from 'pg';
import { PostgresStore, transactionOf } from '../../src/stores/postgres/index.js';
import { startConsumer } from './connect.js';
import type { ConsumerConfig, ConsumerCounts } from './types.js';
import { cpuMs, emit, hold, serve, type Trap, workerConfig } from './worker-io.js';

const config = workerConfig<ConsumerConfig>();
const { schema } = config.db;
// Each handler in flight holds a transaction; the runs counter of a redelivery needs one more call.
const pool = new pg.Pool({
  connectionString: config.db.url,
  application_name: `${config.db.applicationName}-consumer`,
  max: config.concurrency + 2,
});
pool.on('error', () => {});
const store = new PostgresStore({ pool, schema }).transactional();

// The effect, unless the key's previous version has no effect yet (then nothing is written and the run fails).
const APPLY = `
  INSERT INTO "${schema}".effects (uuid, message_id, key, version, pid, token, attempt, at_ms)
  SELECT $1, $2, $3, $4, $5, $6, $7, $8
  WHERE $4 <= 1 + coalesce((SELECT max(version) FROM "${schema}".effects WHERE key = $3), 0)`;

class NotYet extends Error {
  override name = 'NotYet';
}

const counts: ConsumerCounts = {
  processed: 0,
  duplicate: 0,
  busy: 0,
  failed: 0,
  parked: 0,
  invalid: 0,
  retried: 0,
  waits: 0,
  errors: 0,
  cpuMs: 0,
};
/** Message ids whose effect is written and whose outcome is not settled yet. */
const applying = new Set<string>();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let trap: Trap = { spring: () => false };

const consumer = await startConsumer(
  config.broker,
  { store, scope: 'proof', leaseMs: config.leaseMs, maxAttempts: config.maxAttempts },
  config.concurrency,
  {
    async handler({ messageId, payload }, context) {
      const { rowCount } = await transactionOf(context).query(APPLY, [
        payload.uuid,
        messageId,
        payload.key,
        payload.version,
        process.pid,
        context.token,
        context.attempt,
        Date.now(),
      ]);
      if (rowCount === 0) {
        counts.waits++;
        throw new NotYet(`${payload.key} v${payload.version}: the previous version is not applied yet`);
      }
      applying.add(messageId);
      // Armed: this effect is written in a transaction that will never commit.
      if (trap.spring({ applying: applying.size })) await hold();
      // Some work after the effect (a call elsewhere): the window in which a kill leaves the effect uncommitted.
      await sleep(Math.random() * config.workMs);
    },
    onOutcome(outcome, messageId) {
      applying.delete(messageId);
      counts[outcome.kind]++;
      if (outcome.kind === 'processed' && outcome.attempt > 1) counts.retried++;
      if (outcome.kind === 'failed' && !(outcome.error instanceof NotYet)) {
        counts.errors++;
        if (counts.errors <= 5) process.stderr.write(`consumer: failed: ${outcome.error}\n`);
      }
    },
    onError(error, operation) {
      counts.errors++;
      if (counts.errors <= 20) process.stderr.write(`consumer: ${operation}: ${error}\n`);
    },
  },
);
emit({ type: 'ready', pid: process.pid });
const reporter = setInterval(() => emit({ type: 'progress', ...counts, cpuMs: cpuMs() }), 250);
trap = serve(
  () => ({ applying: applying.size }),
  async () => {
    clearInterval(reporter);
    await consumer.stop();
    emit({ type: 'progress', ...counts, cpuMs: cpuMs() });
    await pool.end();
  },
);
