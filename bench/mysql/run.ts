/**
 * @module The MySQL benchmark: MySqlStore (plain and transactional) on MariaDB through mysql2 and through the
 * mariadb connector, beside PostgresStore (plain and transactional) in the same run on the same machine: round
 * trips per new request and per replay (counted on the client), then requests/s, latency, client CPU and server
 * CPU per request in rounds whose order alternates (ABBA), so slow drift of the machine falls on every path alike.
 * Writes the `mysql` section of docs/benchmarks.md. Run it alone:
 *   flock /tmp/oncely-bench.lock node --import tsx bench/mysql/run.ts [--quick]
 */
import { writeSection } from '../write-section.mjs';
import {
  driverVersions,
  type MariaDb,
  openMariaDb,
  openPostgres,
  processesById,
  serverProcesses,
} from './fixtures.js';
import { mariadbPaths, mysql2Paths, type Path, postgresPaths } from './paths.js';
import {
  type DatabaseReport,
  environment,
  messagesList,
  type PathReport,
  REPRODUCE,
  roundTripTable,
  type Servers,
  throughputTable,
} from './report.js';
import { countingPool, type MessageLog } from './round-trips.js';
import { idleRate, type Sample, type ServerMeters, timedRound } from './rounds.js';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 2 : 8;
const DURATION_MS = quick ? 400 : 1_500;
const WARM_MS = quick ? 200 : 750;
const CONCURRENCY = 16;
const POOL_SIZE = 8;
const TRIP_REQUESTS = quick ? 20 : 200;
const REPLAY_KEYS = quick ? 100 : 1_000;
const IDLE_MS = quick ? 500 : 3_000;

interface Database {
  readonly name: string;
  readonly meters: ServerMeters;
  /** The paths the rounds time, on the pool itself. */
  readonly paths: readonly Path[];
  /** The same paths on a counting view of the pool. */
  readonly counted: readonly Path[];
}

const postgres = await openPostgres(POOL_SIZE);
let maria: MariaDb | undefined;
try {
  maria = await openMariaDb(POOL_SIZE);
  let active: MessageLog | undefined;
  const log = () => active;
  const mariadbd = serverProcesses('mariadbd');
  const databases: Database[] = [
    {
      name: 'PostgreSQL (pg)',
      meters: { whole: serverProcesses('postgres'), serving: processesById(postgres.backends) },
      paths: await postgresPaths(REPLAY_KEYS, postgres.pool, postgres.schema, postgres.payments),
      counted: await postgresPaths(
        TRIP_REQUESTS,
        countingPool(postgres.pool, log, postgres.schema),
        postgres.schema,
        postgres.payments,
      ),
    },
    {
      name: 'MariaDB, mysql2',
      meters: { whole: mariadbd },
      paths: await mysql2Paths(REPLAY_KEYS, maria.mysql2, maria.table, maria.payments),
      counted: await mysql2Paths(
        TRIP_REQUESTS,
        countingPool(maria.mysql2, log, maria.table),
        maria.table,
        maria.payments,
      ),
    },
    {
      name: 'MariaDB, mariadb connector',
      meters: { whole: mariadbd },
      paths: await mariadbPaths(REPLAY_KEYS, maria.mariadb, maria.table, maria.payments),
      counted: await mariadbPaths(
        TRIP_REQUESTS,
        countingPool(maria.mariadb, log, maria.table),
        maria.table,
        maria.payments,
      ),
    },
  ];

  // Round trips: one request for its texts, then TRIP_REQUESTS counted, one after another.
  const counts = new Map<Path, { trips: number; texts: string[] }>();
  for (const [d, database] of databases.entries()) {
    for (const [i, path] of database.counted.entries()) {
      const first: MessageLog = { count: 0, texts: [] };
      active = first;
      await path.request(`trips-${d}-${i}-first`);
      const counted: MessageLog = { count: 0, texts: [] };
      active = counted;
      for (let n = 0; n < TRIP_REQUESTS; n++) await path.request(`trips-${d}-${i}-${n}`);
      active = undefined;
      // The path without oncely sends BEGIN, INSERT, COMMIT on every driver: any other count means the counting
      // view missed (or doubled) messages, and every row of the table would be off.
      if (path.kind === 'raw' && counted.count !== 3 * TRIP_REQUESTS) {
        throw new Error(`${path.name}: counted ${counted.count / TRIP_REQUESTS} messages per request, not 3`);
      }
      counts.set(database.paths[i]!, { trips: counted.count / TRIP_REQUESTS, texts: first.texts });
      console.log(`${path.name}: ${(counted.count / TRIP_REQUESTS).toFixed(2)} round trips per request`);
    }
  }

  const all = databases.flatMap((database, d) => database.paths.map((path) => ({ path, database, d })));
  const idleBefore = {
    postgres: await idleRate(databases[0]!.meters.whole, IDLE_MS),
    mariadb: await idleRate(mariadbd, IDLE_MS),
  };
  // Warm: every pool opens its connections, every statement is prepared and cached, JIT settles.
  for (const [i, { path, database }] of all.entries()) {
    await timedRound(path, CONCURRENCY, WARM_MS, `warm-${i}`, database.meters);
  }

  const samples = all.map(() => [] as Sample[]);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [...all.keys()] : [...all.keys()].reverse();
    for (const i of order) {
      const { path, database } = all[i]!;
      samples[i]![round] = await timedRound(
        path,
        CONCURRENCY,
        DURATION_MS,
        `r${round}-${i}`,
        database.meters,
      );
    }
    console.log(`round ${round + 1}/${ROUNDS} done`);
  }
  const idleAfter = {
    postgres: await idleRate(databases[0]!.meters.whole, IDLE_MS),
    mariadb: await idleRate(mariadbd, IDLE_MS),
  };

  const sampleOf = (d: number, kind: Path['kind']) =>
    samples[all.findIndex((entry) => entry.d === d && entry.path.kind === kind)]!;
  const reports: DatabaseReport[] = databases.map((database, d) => ({
    name: database.name,
    paths: database.paths.map((path): PathReport => {
      const mine = sampleOf(d, path.kind);
      const own = sampleOf(d, 'raw');
      const postgresSame = sampleOf(0, path.kind);
      return {
        kind: path.kind,
        trips: counts.get(path)!.trips,
        texts: counts.get(path)!.texts,
        perSec: mine.map((s) => s.perSec),
        vsOwn: mine.map((s, round) => s.perSec / own[round]!.perSec),
        vsPostgres: mine.map((s, round) => s.perSec / postgresSame[round]!.perSec),
        p50: mine.map((s) => s.p50),
        p99: mine.map((s) => s.p99),
        clientCpuUs: mine.map((s) => s.clientCpuUs),
        serverCpuUs: mine.map((s) => s.serverCpuUs),
        servingCpuUs: mine.flatMap((s) => (s.servingCpuUs === undefined ? [] : [s.servingCpuUs])),
      };
    }),
  }));

  const servers = await serverSettings(postgres.pool, maria);
  const idle = (rates: { postgres: number; mariadb: number }) =>
    `PostgreSQL ${rates.postgres.toFixed(0)} ms/s, mariadbd ${rates.mariadb.toFixed(0)} ms/s`;
  const markdown = [
    '## MySQL / MariaDB store beside PostgreSQL',
    '',
    environment(servers, driverVersions()),
    '',
    'The handler is the PostgreSQL section’s payments example on each database: one INSERT of a payment row (an',
    'auto-increment id, an order id, an amount) in a transaction, a new idempotency key per request. Without',
    'oncely it is `BEGIN`/`START TRANSACTION`, the INSERT, `COMMIT` on a connection of the pool (pg’s `query`;',
    '`beginTransaction()` and `commit()` on mysql2 and on the mariadb connector). The plain store runs that same',
    'handler, the key’s record in statements of its own around it; transactional mode claims the key, runs the',
    'INSERT and stores the outcome in one transaction (`store.transactional()`, the handler writing through',
    '`transactionOf(context)` on PostgreSQL and `connectionOf(context)` on MariaDB). A replay is a key already',
    'completed, through the same function. The stores are made as their pages show:',
    '`new PostgresStore({ pool, schema })` on a pg Pool, `new MySqlStore({ pool, table })` on',
    `\`mysql.createPool({ uri, connectionLimit: ${POOL_SIZE} })\` and on`,
    `\`mariadb.createPool({ host, user, database, connectionLimit: ${POOL_SIZE} })\`, at each server’s default isolation`,
    '(READ COMMITTED on PostgreSQL, REPEATABLE READ on MariaDB). MySQL itself was not measured: it cannot be installed',
    'on this machine.',
    '',
    '### Round trips per request',
    '',
    'Counted on the client over sequential requests, by wrapping `query` and `execute` of the pool and of every',
    'connection it hands out (and `beginTransaction`, `commit`, `rollback` on MariaDB’s: each sends one statement',
    'and waits): one call is one round trip. A `CALL` is one round trip however many result sets it answers with,',
    'and pg’s `BEGIN; claim` is one message of two statements.',
    '',
    roundTripTable(reports),
    '',
    '### Throughput',
    '',
    `${CONCURRENCY} requests in flight over a pool of ${POOL_SIZE} connections per database, ${DURATION_MS} ms per path,`,
    `${ROUNDS} rounds, the order of the ${all.length} paths reversed every other round; median (min–max) over the rounds.`,
    'Each request starts in an event of its own (`setImmediate`), as requests from sockets do: a loop that called',
    'again at once would take the connection it had just released ahead of the waiting loops on the mariadb',
    'connector, whose pool serves its queue a tick after a release (8 of 16 loops then waited whole rounds).',
    'Both ratios divide by a path measured in the same round. Client CPU is this process’s (the load generator',
    'and the driver). Server CPU is utime + stime from /proc (10 ms ticks) of **the whole server**: every postgres',
    'process, and the one mariadbd process, whose threads serve every connection and run InnoDB’s background work.',
    'Other clients of either server (other work on the machine) add to it: while this benchmark sent nothing, the',
    `servers used ${idle(idleBefore)} before the rounds and ${idle(idleAfter)} after; at 2,000 requests/s, 10 ms/s`,
    'of noise is 5 µs per request. On PostgreSQL the pool’s own backends can be told apart (last column);',
    'MariaDB runs connections as threads of one process, and this server has no performance_schema to map them.',
    'No throughput is claimed for MySQL: only MariaDB ran.',
    '',
    throughputTable(reports),
    '',
    '<details><summary>What one request of each path sends</summary>',
    '',
    messagesList(reports),
    '',
    '</details>',
  ].join('\n');
  console.log(`\n${markdown}\n`);
  if (quick) {
    console.log(`--quick: docs/benchmarks.md left as it is (run \`${REPRODUCE}\` for the real table)`);
  } else {
    writeSection('mysql', markdown);
    console.log('docs/benchmarks.md: section mysql written');
  }
} finally {
  await maria?.close();
  await postgres.close();
}

/** Each server's version and the settings that decide what a commit costs, read from the servers themselves. */
async function serverSettings(pool: (typeof postgres)['pool'], mariaDb: MariaDb): Promise<Servers> {
  const pg = async (name: string) =>
    String((await pool.query(`SHOW ${name}`)).rows[0][name]).replace(/ \(.*$/, '');
  const [rows] = await mariaDb.mysql2.query(
    'SELECT @@innodb_flush_log_at_trx_commit AS flush, @@log_bin AS binlog, @@tx_isolation AS isolation',
  );
  const maria = (rows as { flush: number; binlog: number; isolation: string }[])[0]!;
  return {
    postgres: `PostgreSQL ${await pg('server_version')} (fsync ${await pg('fsync')}, synchronous_commit ${await pg('synchronous_commit')})`,
    mariadb:
      `MariaDB ${mariaDb.version.replace(/-MariaDB.*$/, '')} (innodb_flush_log_at_trx_commit ${maria.flush}, ` +
      `binary log ${Number(maria.binlog) === 1 ? 'on' : 'off'})`,
  };
}
