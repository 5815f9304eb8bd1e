// What commit order per key costs: the outbox of this tree (each writer takes its key's advisory lock, the relay
// reads in seq order) against the outbox of an earlier commit (no lock, (xid, id) order below the xid horizon),
// measured in one run, rounds alternating. No broker: the publisher confirms at once, so the relay's numbers are
// the database's share. Prints a table; docs/benchmarks.md quotes it by hand (see bench/messaging/limits.md).
//
//   rm -rf /tmp/oncely-before && mkdir /tmp/oncely-before
//   git archive <commit> src scripts tsconfig.json package.json | tar -x -C /tmp/oncely-before
//   ln -s "$PWD/node_modules" /tmp/oncely-before/node_modules && node /tmp/oncely-before/scripts/embed-assets.mjs
//   flock /tmp/oncely-bench.lock node --import tsx bench/messaging/ordering-cost.ts /tmp/oncely-before [--quick] [--rounds n]
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import type * as OutboxModule from '../../src/messaging/outbox/index.js';
import type { Publisher } from '../../src/messaging/publisher.js';
import { DATABASE_URL, median, spread, tag } from './fixtures.js';

type Outboxes = typeof OutboxModule;
const before = process.argv[2];
if (before === undefined || before.startsWith('--')) {
  console.error('usage: ordering-cost.ts <directory holding the earlier src/> [--quick] [--rounds n]');
  process.exit(2);
}
const quick = process.argv.includes('--quick');
const roundsAt = process.argv.indexOf('--rounds');
const ROUNDS = roundsAt > 0 ? Number(process.argv[roundsAt + 1]) : quick ? 2 : 5;
const TRANSACTIONS = quick ? 1_000 : 4_000;
const BACKLOG = quick ? 5_000 : 20_000;
const CONNECTIONS = 8;

const variants: { name: string; module: Outboxes }[] = [
  { name: 'before', module: (await import(`${before}/src/messaging/outbox/index.ts`)) as Outboxes },
  { name: 'now', module: (await import('../../src/messaging/outbox/index.js')) as Outboxes },
];
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: CONNECTIONS + 2 });
pool.on('error', () => {});
const schemas = variants.map((v) => `oncely_bench_order_${v.name}_${tag}`);
for (const [i, variant] of variants.entries()) await variant.module.migrate(pool, { schema: schemas[i]! });

/** Transactions per second: BEGIN, one `outbox.add`, COMMIT, on 8 connections; `keys` distinct keys in use. */
async function writers(outboxes: Outboxes, schema: string, keys: number | 'distinct'): Promise<number> {
  const outbox = new outboxes.Outbox({ schema, notify: false });
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      const client = await pool.connect();
      try {
        for (let n = next++; n < TRANSACTIONS; n = next++) {
          const key = keys === 'distinct' ? `order-${n}` : `hot-${n % keys}`;
          await client.query('BEGIN');
          await outbox.add(client, { topic: 't', key, payload: { n, amount: 1250, currency: 'EUR' } });
          await client.query('COMMIT');
        }
      } finally {
        client.release();
      }
    }),
  );
  return (TRANSACTIONS / (performance.now() - started)) * 1000;
}

/** One relay drains a backlog of BACKLOG rows over BACKLOG / 4 keys; events/s to the last confirmation. */
async function drain(outboxes: Outboxes, schema: string): Promise<number> {
  const outbox = new outboxes.Outbox({ schema, notify: false });
  for (let start = 0; start < BACKLOG; start += 1_000) {
    await outbox.addMany(
      pool,
      Array.from({ length: 1_000 }, (_, i) => ({
        topic: 't',
        key: `order-${(start + i) % (BACKLOG / 4)}`,
        payload: { n: start + i, amount: 1250, currency: 'EUR' },
      })),
    );
  }
  await pool.query(`ANALYZE "${schema}".oncely_outbox`);
  let confirmed = 0;
  let done = () => {};
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  const publisher: Publisher = {
    name: 'null',
    delivery: 'at-least-once',
    async publish() {
      if (++confirmed === BACKLOG) done();
    },
  };
  const relay = new outboxes.OutboxRelay({
    pool,
    schema,
    publisher,
    batchSize: 500,
    listen: false,
    minPollMs: 1,
  });
  const started = performance.now();
  await relay.start();
  await finished;
  const elapsed = performance.now() - started;
  await relay.stop();
  return (BACKLOG / elapsed) * 1000;
}

const scenarios = [
  {
    name: `writers, ${CONNECTIONS} connections, a distinct key per transaction (tx/s)`,
    run: (o: Outboxes, s: string) => writers(o, s, 'distinct'),
  },
  {
    name: `writers, ${CONNECTIONS} connections sharing 4 keys (tx/s)`,
    run: (o: Outboxes, s: string) => writers(o, s, 4),
  },
  {
    name: `relay drain, ${BACKLOG.toLocaleString('en')} events over ${(BACKLOG / 4).toLocaleString('en')} keys, no broker (events/s)`,
    run: drain,
  },
];
const results = scenarios.map(() => variants.map(() => [] as number[]));
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const [s, scenario] of scenarios.entries()) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const v of order) {
        await pool.query(`TRUNCATE "${schemas[v]}".oncely_outbox`);
        await pool.query(`VACUUM "${schemas[v]}".oncely_outbox`);
        results[s]![v]!.push(await scenario.run(variants[v]!.module, schemas[v]!));
      }
    }
    process.stdout.write(`round ${round + 1}/${ROUNDS} done\n`);
  }
} finally {
  for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
}

console.log('\n| scenario | before | now | now / before |\n| --- | --- | --- | --- |');
for (const [s, scenario] of scenarios.entries()) {
  const [old, now] = results[s]!;
  const ratios = now!.map((value, i) => value / old![i]!);
  console.log(
    `| ${scenario.name} | ${spread(old!)} | ${spread(now!)} | ${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}) |`,
  );
}
