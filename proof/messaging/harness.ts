// The messaging proof's orchestrator, per broker: a schema of the run's own (outbox, inbox records, business
// tables, effect ledger), the broker behind its fault proxy, relay processes and consumer processes, and a
// producer process committing events as the consumers keep up. Faults are injected as the share of the planned
// events applied downstream reaches each point of the plan. Then the events drain, everything stops gracefully,
// and the checker gets what committed, what the broker holds and what was applied.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { services } from '../../test/support/services.js';
import { type BrokerUnderTest, startBroker } from './brokers.js';
import { checkMessaging } from './check.js';
import { sleep, spawnWorker, type WorkerProcess } from './children.js';
import { type FaultContext, injectFault } from './faults.js';
import { createMessagingLedger } from './ledger.js';
import { startProducer } from './producer-process.js';
import {
  type BrokerReport,
  CONSUMER_ZERO,
  type MessagingSettings,
  percentile,
  RELAY_ZERO,
  sum,
} from './settings.js';
import type {
  BrokerKind,
  ConsumerConfig,
  ConsumerCounts,
  Database,
  MessagingFault,
  RelayConfig,
  RelayCounts,
} from './types.js';
import { topicOf } from './types.js';

export type { BrokerReport, MessagingSettings } from './settings.js';

/**
 * What to kill if the orchestrator is interrupted or crashes (the `finally` blocks do not run then): the broker
 * servers it started would outlive it. Workers exit by themselves once their stdin closes.
 */
const running = new Set<() => void>();
let handling = false;

function cleanUpOnExit(): void {
  if (handling) return;
  handling = true;
  const killAll = () => {
    for (const kill of running) kill();
  };
  process.once('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      killAll();
      process.exit(130);
    });
}

interface Context {
  readonly runId: string;
  readonly outDir: string;
  readonly keep: boolean;
  readonly log: (line: string) => void;
}

export async function runBroker(
  kind: BrokerKind,
  settings: MessagingSettings,
  context: Context,
): Promise<BrokerReport> {
  const { runId, log } = context;
  const startedAt = Date.now();
  const schema = `oncely_proof_${runId}_msg_${kind.replace('-', '_')}`;
  const outDir = join(context.outDir, `${runId}-${kind}`);
  mkdirSync(outDir, { recursive: true });
  const ledger = await createMessagingLedger(services.postgres.url, schema);
  const db: Database = { url: services.postgres.url, schema, applicationName: schema };
  let broker: BrokerUnderTest | undefined;
  const relays: WorkerProcess<RelayCounts>[] = [];
  const consumers: WorkerProcess<ConsumerCounts>[] = [];
  /** Every process that ever ran (its last counts are part of the totals). */
  const retired: WorkerProcess<RelayCounts | ConsumerCounts>[] = [];
  const crashes: { name: string; pid: number; exit: string }[] = [];
  let producer: Awaited<ReturnType<typeof startProducer>> | undefined;
  let stopping = false;
  const killAll = () => {
    producer?.kill();
    for (const worker of [...relays, ...consumers]) worker.child.kill('SIGKILL');
    broker?.kill();
  };
  cleanUpOnExit();
  running.add(killAll);
  try {
    broker = await startBroker(kind, runId);
    const relayConfig = (name: string): RelayConfig => ({
      name,
      db,
      broker: broker!.connection,
      leaseMs: settings.relayLeaseMs,
      publishTimeoutMs: settings.publishTimeoutMs,
      batchSize: settings.batchSize,
    });
    const consumerConfig = (name: string): ConsumerConfig => ({
      name,
      db,
      broker: broker!.connection,
      concurrency: settings.consumerConcurrency,
      leaseMs: settings.inboxLeaseMs,
      maxAttempts: settings.maxAttempts,
      workMs: settings.workMs,
    });
    /** A process that exits on its own crashed: recorded (a violation) and replaced. */
    const watch = <P>(
      list: WorkerProcess<P>[],
      worker: WorkerProcess<P>,
      respawn: () => Promise<WorkerProcess<P>>,
    ) => {
      void worker.exited.then(async (exit) => {
        if (worker.expectExit || stopping) return;
        crashes.push({ name: worker.name, pid: worker.pid, exit });
        log(`${kind}: ${worker.name} (pid ${worker.pid}) CRASHED (${exit}); starting another`);
        const index = list.indexOf(worker);
        retired.push(worker as WorkerProcess<RelayCounts | ConsumerCounts>);
        const next = await respawn();
        if (index !== -1) list[index] = next;
      });
    };
    const spawnRelay = async (name: string): Promise<WorkerProcess<RelayCounts>> => {
      const worker = await spawnWorker<RelayCounts>('relay-worker.ts', name, relayConfig(name), outDir);
      watch(relays, worker, () => spawnRelay(name));
      return worker;
    };
    const spawnConsumer = async (name: string): Promise<WorkerProcess<ConsumerCounts>> => {
      const worker = await spawnWorker<ConsumerCounts>(
        'consumer-worker.ts',
        name,
        consumerConfig(name),
        outDir,
      );
      watch(consumers, worker, () => spawnConsumer(name));
      return worker;
    };
    const [startedRelays, startedConsumers] = await Promise.all([
      Promise.all(Array.from({ length: settings.relays }, (_, i) => spawnRelay(`relay-${i}`))),
      Promise.all(Array.from({ length: settings.consumers }, (_, i) => spawnConsumer(`consumer-${i}`))),
    ]);
    relays.push(...startedRelays);
    consumers.push(...startedConsumers);
    log(
      `${kind}: broker up, ${relays.length} relays (pids ${relays.map((r) => r.pid).join(', ')}), ${consumers.length} consumers (pids ${consumers.map((c) => c.pid).join(', ')})`,
    );

    producer = await startProducer(
      {
        db,
        topic: topicOf(broker.connection),
        keys: settings.keys,
        connections: settings.producerConnections,
        maxPerTransaction: settings.maxPerTransaction,
        rollbackRate: settings.rollbackRate,
      },
      outDir,
    );
    await producer.ready;
    const loadStarted = Date.now();
    let applied = 0;
    const progress = () => applied / settings.events;
    // Credit for the producer and the progress that triggers faults, from what the processes report (counting
    // the ledger every 200 ms would cost the database more than the run's own work at 100,000 events; the drain
    // below counts it exactly).
    let watching = true;
    let loggedAt = Date.now();
    let movedAt = Date.now();
    let produced = 0;
    let stuck = false;
    /**
     * Committed events wait and nothing was applied for `stallMs`: the pipeline is stuck (a lost event blocks its
     * key, and soon every key). Recorded: the checker counts a stuck run as a violation.
     */
    const stalled = () => {
      if (produced > applied && Date.now() - movedAt > settings.stallMs) stuck = true;
      return stuck;
    };
    const watcher = (async () => {
      while (watching) {
        const processed = [...consumers, ...retired].reduce(
          (total, worker) => total + ((worker.progress as ConsumerCounts | undefined)?.processed ?? 0),
          0,
        );
        const now = { applied: processed, produced: producer!.state.committed };
        if (now.applied !== applied || now.produced === now.applied) movedAt = Date.now();
        ({ applied, produced } = now);
        if (Date.now() - loggedAt >= 10_000) {
          loggedAt = Date.now();
          log(`${kind}: ${producer!.state.committed} committed, ${applied} applied`);
        }
        producer!.credit(Math.min(settings.events, applied + settings.backlog));
        if (producer!.state.committed >= settings.events || stalled()) producer!.stop();
        await sleep(200);
      }
    })();

    const faults: MessagingFault[] = [];
    const faultContext: FaultContext = {
      broker,
      relays,
      consumers,
      retired,
      respawnRelay: spawnRelay,
      respawnConsumer: spawnConsumer,
      kind,
    };
    let lifted = 0;
    for (const [step, planned] of settings.faults.entries()) {
      while ((progress() < planned.at || Date.now() < lifted + settings.faultGapMs) && !stalled())
        await sleep(50);
      if (stalled()) {
        log(`${kind}: nothing applied for ${settings.stallMs} ms: the remaining faults are skipped`);
        break;
      }
      const fault = await injectFault(planned, step, progress(), faultContext);
      lifted = fault.endedAt;
      faults.push(fault);
      log(
        `${kind}: ${fault.name} at ${(fault.at * 100).toFixed(0)}%: ${fault.detail} (${fault.endedAt - fault.startedAt} ms)`,
      );
    }
    await producer.exited;
    const loadMs = Date.now() - loadStarted;
    const { committed, rolledBack } = producer.state;
    log(
      `${kind}: ${committed} events committed (${rolledBack} rolled back) in ${(loadMs / 1000).toFixed(1)} s; draining`,
    );

    // Everything committed must arrive: wait for it (until nothing moves for `stallMs`, or `drainTimeoutMs`).
    const drainUntil = Date.now() + settings.drainTimeoutMs;
    for (;;) {
      await sleep(1_000);
      const [now, outbox] = await Promise.all([ledger.progress(), ledger.outbox()]);
      if (now.applied >= now.produced && outbox.pending === 0) break;
      if (stalled() || Date.now() > drainUntil) {
        log(`${kind}: ${now.produced - now.applied} committed events not applied; giving up the wait`);
        break;
      }
    }
    // A moment for late duplicates (a redelivery after a lost ack) to show.
    watching = false;
    await watcher;
    await sleep(1_000);
    stopping = true;
    await Promise.all(consumers.map((c) => c.stop(15_000)));
    await Promise.all(relays.map((r) => r.stop(10_000)));
    const endedAt = Date.now();

    const [rows, outbox, brokerLog, leftovers] = await Promise.all([
      ledger.read(),
      ledger.outbox(),
      broker.readLog(),
      broker.leftovers(),
    ]);
    const relayCounts = sum(
      RELAY_ZERO,
      [...relays, ...retired].map((w) => w.progress as RelayCounts),
    );
    const consumerCounts = sum(
      CONSUMER_ZERO,
      [...consumers, ...retired].map((w) => w.progress as ConsumerCounts),
    );
    const result = checkMessaging({
      stuck: stuck
        ? { committed: rows.produced.length, planned: settings.events, stallMs: settings.stallMs }
        : undefined,
      produced: rows.produced,
      effects: rows.effects,
      log: brokerLog,
      outbox,
      leftovers,
      consumers: consumerCounts,
      relays: relayCounts,
      crashes,
    });
    const writtenAt = new Map(rows.produced.map((row) => [row.uuid, row.at]));
    const latencies = rows.effects
      .map((effect) => effect.at - (writtenAt.get(effect.uuid) ?? effect.at))
      .sort((a, b) => a - b);
    return {
      kind,
      startedAt,
      durationMs: endedAt - startedAt,
      loadMs,
      committed: rows.produced.length,
      rolledBack,
      throughput: Math.round(rows.produced.length / (loadMs / 1000)),
      latencyMs: {
        p50: percentile(latencies, 0.5),
        p99: percentile(latencies, 0.99),
        max: latencies.at(-1) ?? 0,
      },
      relays: relayCounts,
      consumers: consumerCounts,
      processes: {
        relays: relays.length + retired.filter((w) => w.name.startsWith('relay')).length,
        consumers: consumers.length + retired.filter((w) => w.name.startsWith('consumer')).length,
      },
      cpuMs: { producer: producer.state.cpuMs, relays: relayCounts.cpuMs, consumers: consumerCounts.cpuMs },
      faults,
      leftovers,
      result,
      schema,
    };
  } finally {
    running.delete(killAll);
    stopping = true;
    producer?.kill();
    for (const worker of [...relays, ...consumers]) worker.child.kill('SIGKILL');
    await broker?.close().catch(() => {});
    if (context.keep) await ledger.pool.end();
    else await ledger.drop().catch(() => {});
  }
}

export async function runMessaging(settings: MessagingSettings, context: Context): Promise<BrokerReport[]> {
  if (settings.parallel)
    return Promise.all(settings.brokers.map((kind) => runBroker(kind, settings, context)));
  const reports: BrokerReport[] = [];
  for (const kind of settings.brokers) reports.push(await runBroker(kind, settings, context));
  return reports;
}
