// A relay process of the messaging proof: one `OutboxRelay` (docs/messaging/relay.md) publishing the run's
// outbox to the broker under test, through the fault proxy. Answers `status` with how many publishes the broker
// confirmed that the relay has not marked yet (so the orchestrator can SIGKILL it mid-batch: the broker has
// part of the batch, the outbox still holds it), and reports its counts every 250 ms.
import pg from 'pg';
import { OutboxRelay } from '../../src/messaging/outbox/index.js';
import type { Publisher } from '../../src/messaging/publisher.js';
import { brokerPublisher } from './connect.js';
import type { RelayConfig, RelayCounts } from './types.js';
import { cpuMs, emit, hold, serve, type Trap, workerConfig } from './worker-io.js';

const config = workerConfig<RelayConfig>();
const pool = new pg.Pool({
  connectionString: config.db.url,
  application_name: `${config.db.applicationName}-relay`,
  max: 3,
});
pool.on('error', () => {});
const broker = await brokerPublisher(config.broker, config.publishTimeoutMs);

/** Publishes confirmed since the relay last settled a batch: the published, unmarked part of the batch in flight. */
let unmarked = 0;
const counts: RelayCounts = {
  published: 0,
  failed: 0,
  fenced: 0,
  returned: 0,
  outages: 0,
  deadLettered: 0,
  duplicates: 0,
  errors: 0,
  cpuMs: 0,
};
let trap: Trap = { spring: () => false };
const counting: Publisher = {
  name: broker.publisher.name,
  delivery: broker.publisher.delivery,
  prepare: (context) => broker.publisher.prepare?.(context) ?? Promise.resolve(),
  async publish(message, signal) {
    await broker.publisher.publish(message, signal);
    unmarked++;
    // Armed: the broker has this message and the relay will never mark it (the batch cannot settle).
    if (trap.spring({ unmarked })) await hold();
  },
};

const relay = new OutboxRelay({
  pool,
  publisher: counting,
  schema: config.db.schema,
  leaseMs: config.leaseMs,
  publishTimeoutMs: config.publishTimeoutMs,
  batchSize: config.batchSize,
  backoff: { initialMs: 100, maxMs: 2_000 },
  onEvent: (event) => {
    if (event.type === 'published' || event.type === 'failed' || event.type === 'returned') unmarked = 0;
    if (event.type === 'published') counts.published += event.count;
    else if (event.type === 'failed') {
      counts.failed++;
      if (event.dead) counts.deadLettered++;
    } else if (event.type === 'fenced') counts.fenced += event.count;
    else if (event.type === 'returned') counts.returned += event.count;
    else if (event.type === 'outage') counts.outages++;
    else if (event.type === 'error') counts.errors++;
    else if (event.type === 'warning') process.stderr.write(`relay warning: ${event.message}\n`);
  },
});
await relay.start();
emit({ type: 'ready', pid: process.pid });

const progress = () => ({ ...counts, duplicates: broker.duplicates(), cpuMs: cpuMs() });
const reporter = setInterval(() => emit({ type: 'progress', ...progress() }), 250);
trap = serve(
  () => ({ unmarked }),
  async () => {
    clearInterval(reporter);
    await relay.stop({ timeoutMs: 5_000 });
    emit({ type: 'progress', ...progress() });
    await broker.close().catch(() => {});
    await pool.end();
  },
);
