// The messaging benchmark: relay throughput to NATS JetStream, RabbitMQ and Redis Streams (one relay and three,
// against the broker's own ceiling for one client), commit-to-publish latency under a steady producer, and the
// inbox's cost on Redis and PostgreSQL. Writes the `messaging` section of docs/benchmarks.md. Run it alone:
//   flock /tmp/oncely-bench.lock node --import tsx bench/messaging/run.ts [--quick]
import pg from 'pg';
import { writeSection } from '../write-section.mjs';
import { consumerFixtures, consumerRound } from './consumer.js';
import {
  type BrokerTarget,
  DATABASE_URL,
  environment,
  median,
  natsTarget,
  outboxDatabase,
  rabbitTarget,
  redisTarget,
  spread,
  versionOf,
} from './fixtures.js';
import { commitToPublishLatency, directThroughput, type LatencySample, relayThroughput } from './relay.js';

const quick = process.argv.includes('--quick');
// `--from-results` rewrites the section from the last full run's tables (bench/results/messaging.raw.json) and
// the current limits.md, without measuring again.
const fromResults = process.argv.includes('--from-results');
const RESULTS = new URL('../results/messaging.raw.json', import.meta.url);
if (fromResults) {
  const { readFileSync } = await import('node:fs');
  const { markdown } = JSON.parse(readFileSync(RESULTS, 'utf8')) as { markdown: string };
  await publish(markdown);
  process.exit(0);
}
const ROUNDS = quick ? 2 : 6;
const BACKLOG = quick ? 5_000 : 20_000;
const KEYS = BACKLOG / 4;
const BATCH = 500;
const LATENCY_MS = quick ? 3_000 : 10_000;
const CONSUMER_MESSAGES = quick ? 1_000 : 4_000;
const CONSUMER_CONCURRENCY = 32;
const REPRODUCE = 'flock /tmp/oncely-bench.lock node --import tsx bench/messaging/run.ts';

const db = await outboxDatabase(8);
const producers = new pg.Pool({ connectionString: DATABASE_URL, max: 8 });
producers.on('error', () => {});
const targets: BrokerTarget[] = [await natsTarget(), await rabbitTarget(), await redisTarget()];
const pgVersion = (await db.pool.query('SHOW server_version')).rows[0].server_version as string;

interface RelayRow {
  readonly target: BrokerTarget;
  readonly direct: number[];
  readonly one: number[];
  readonly three: number[];
  readonly ratio: number[];
  readonly cpu: number[];
  readonly latency: LatencySample[];
}
const relayRows: RelayRow[] = [];
try {
  for (const target of targets) {
    const row: RelayRow = { target, direct: [], one: [], three: [], ratio: [], cpu: [], latency: [] };
    await relayThroughput(db, target, BACKLOG / 4, KEYS / 4, BATCH); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['direct', 'one', 'three'] : ['three', 'one', 'direct'];
      const sample: Record<string, number> = {};
      for (const variant of order) {
        await target.reset();
        await db.pool.query(`VACUUM ${db.table}`);
        if (variant === 'direct') sample.direct = (await directThroughput(target, BACKLOG, 256)).perSec;
        else {
          const result = await relayThroughput(db, target, BACKLOG, KEYS, BATCH, variant === 'one' ? 1 : 3);
          sample[variant] = result.perSec;
          if (variant === 'one') row.cpu.push(result.cpuUsPerEvent);
        }
      }
      row.direct.push(sample.direct!);
      row.one.push(sample.one!);
      row.three.push(sample.three!);
      row.ratio.push(sample.one! / sample.direct!);
      process.stdout.write(`${target.name}: round ${round + 1}/${ROUNDS} done\n`);
    }
    for (const [rate, perTransaction] of [
      [1_000, 1],
      [5_000, 10],
    ] as const) {
      await target.reset();
      await db.pool.query(`VACUUM ${db.table}`);
      row.latency.push(await commitToPublishLatency(db, producers, target, rate, perTransaction, LATENCY_MS));
    }
    relayRows.push(row);
  }
} finally {
  for (const target of targets) await target.close();
  await producers.end();
  await db.close();
}

const consumer = await consumerFixtures(8);
const consumerRates = consumer.scenarios.map(() => [] as number[]);
const consumerRatios = consumer.scenarios.map(() => [] as number[]);
try {
  for (const [i, scenario] of consumer.scenarios.entries())
    await consumerRound(scenario, 300, CONSUMER_CONCURRENCY, `warm${i}`);
  for (let round = 0; round < ROUNDS; round++) {
    const order = [...consumer.scenarios.keys()];
    if (round % 2 === 1) order.reverse();
    const rates = new Map<number, number>();
    for (const i of order) {
      rates.set(
        i,
        await consumerRound(
          consumer.scenarios[i]!,
          CONSUMER_MESSAGES,
          CONSUMER_CONCURRENCY,
          `r${round}s${i}`,
        ),
      );
    }
    for (const [i, rate] of rates) {
      consumerRates[i]!.push(rate);
      consumerRatios[i]!.push(rate / rates.get(0)!);
    }
    process.stdout.write(`consumer: round ${round + 1}/${ROUNDS} done\n`);
  }
} finally {
  await consumer.close();
}

const ms = (n: number) => n.toFixed(1);
const best = Math.max(...relayRows.map((r) => median(r.three)));
const markdown = [
  '## Messaging',
  '',
  environment(
    REPRODUCE,
    `PostgreSQL ${pgVersion}, NATS server 2.9 (JetStream, file storage), RabbitMQ 3.10, Redis 7.0, all on 127.0.0.1 ` +
      `(stock configuration, fsync on), pg ${versionOf('pg')}, @nats-io/jetstream ${versionOf('@nats-io/jetstream')} ` +
      `(connection with \`noAsyncTraces: true\`), amqplib ${versionOf('amqplib')}, ioredis ${versionOf('ioredis')}`,
  ),
  '',
  '### Relay throughput',
  '',
  `A backlog of ${BACKLOG.toLocaleString('en')} events (${KEYS.toLocaleString('en')} ordering keys, 4 events each, a ` +
    `48-byte JSON payload) drained by relays claiming ${BATCH} rows per cycle and deleting them once confirmed ` +
    '(`keepPublishedMs: 0`); events/s from the relays\' start to the last confirmation. "Direct" is the same ' +
    'publisher sending as many messages straight to the broker, 256 in flight: what the broker and its client take ' +
    `from one process, the ceiling for a relay. ${ROUNDS} rounds, the order of the three alternating, the table ` +
    'vacuumed between runs; median (min–max). Relays run in the benchmark process (three relays: three loops on one ' +
    'pool, as three processes would be).',
  '',
  '| broker | direct publish, events/s | 1 relay, events/s | 3 relays, events/s | 1 relay / direct | relay CPU µs/event (1 relay) |',
  '| --- | --- | --- | --- | --- | --- |',
  ...relayRows.map(
    (r) =>
      `| ${r.target.label} | ${spread(r.direct)} | ${spread(r.one)} | **${spread(r.three)}** | ${spread(r.ratio, 2)} | ${spread(r.cpu)} |`,
  ),
  '',
  `Goal: 20,000 events/s on these 2 cores. Best median reached: **${Math.round(best).toLocaleString('en')} events/s**` +
    (best >= 20_000 ? ' (goal met).' : ' (goal not met; see what limits it below).'),
  '',
  '### Commit-to-publish latency',
  '',
  'Eight producer connections commit events at a fixed rate while one relay (LISTEN/NOTIFY on, defaults ' +
    "otherwise) publishes them; latency runs from the producer's `COMMIT` returning to the broker's confirmation " +
    `reaching the relay, over ${LATENCY_MS / 1000} s per run.`,
  '',
  '| broker | offered | achieved events/s | p50 ms | p99 ms | max ms | events |',
  '| --- | --- | --- | --- | --- | --- | --- |',
  ...relayRows.flatMap((r) =>
    r.latency.map(
      (l) =>
        `| ${r.target.name} | ${l.ratePerSec.toLocaleString('en')}/s, ${l.eventsPerTransaction} per transaction | ` +
        `${Math.round(l.achievedPerSec).toLocaleString('en')} | ${ms(l.p50)} | **${ms(l.p99)}** | ${ms(l.max)} | ${l.samples.toLocaleString('en')} |`,
    ),
  ),
  '',
  '### Consumer with the inbox',
  '',
  `${CONSUMER_MESSAGES.toLocaleString('en')} new messages per run fed to \`inbox.handle\`, ${CONSUMER_CONCURRENCY} at a ` +
    "time (no broker in the loop: this is the inbox's own cost); the handler writes one row into PostgreSQL. " +
    `${ROUNDS} rounds, order alternating; "vs no inbox" divides by the run without an inbox in the same round.`,
  '',
  '| scenario | messages/s | vs no inbox | store round trips per new message |',
  '| --- | --- | --- | --- |',
  ...consumer.scenarios.map(
    (s, i) =>
      `| ${s.name} | ${spread(consumerRates[i]!)} | ${spread(consumerRatios[i]!, 2)} | ${s.storeTrips} |`,
  ),
].join('\n');

console.log(`\n${markdown}\n`);
if (quick) {
  console.log(`--quick: docs/benchmarks.md left as it is (run \`${REPRODUCE}\` for the real table)`);
} else {
  const { writeFileSync } = await import('node:fs');
  writeFileSync(RESULTS, JSON.stringify({ markdown }));
  await publish(markdown);
}

async function publish(tables: string): Promise<void> {
  const { readFileSync } = await import('node:fs');
  const limits = readFileSync(new URL('./limits.md', import.meta.url), 'utf8').trim();
  writeSection('messaging', `${tables}\n\n${limits}`);
  console.log('docs/benchmarks.md: section messaging written');
}
