// The HTTP benchmark per Redis client: Express 5 with oncely on a RedisStore over each client library the store
// takes (ioredis, iovalkey, node-redis, Valkey GLIDE), against bare Express, measured as bench/http/run.ts measures
// (alternating A/B rounds, autocannon, 50 connections, servers in their own processes, a disposable redis-server),
// with the Redis commands per request read off INFO commandstats and the storm. Writes the `http-clients` section of
// docs/benchmarks.md. On a quiet machine only, as the HTTP bench:
//   flock /tmp/oncely-bench.lock node --import tsx bench/http/clients.ts
// PAIRS=8 ROUND_S=3 by default; CLIENTS=ioredis,glide measures some; WRITE=0 prints the section instead of
// writing it and bench/results/http-clients.raw.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { CLIENTS, type ClientName } from '../../test/redis/support/clients.js';
import { startRedis, stopAll } from '../../test/redis/support/redis-server.js';
import { writeSection } from '../write-section.mjs';
import { type ClientRow, clientsReport } from './clients-report.js';
import { alternatingPairs, completeReplayKeys, measureRound, type Workload } from './measure.js';
import { startServer } from './processes.js';
import { type CountedRound, withCommands } from './round-commands.js';
import { machine, packageVersion } from './run-info.js';
import { storm } from './storm.js';
import { type Scenario, summarize, summaryLine } from './summary.js';

const PAIRS = Number(process.env.PAIRS ?? 8);
const ROUND_S = Number(process.env.ROUND_S ?? 3);
const WRITE = process.env.WRITE !== '0';
const CHOSEN = (process.env.CLIENTS?.split(',') ?? CLIENTS) as ClientName[];
const WORKLOADS: readonly Workload[] = ['unique', 'replay'];
const RAW = new URL('../results/http-clients.raw.json', import.meta.url);
const COMMAND = 'flock /tmp/oncely-bench.lock node --import tsx bench/http/clients.ts';

for (const client of CHOSEN)
  if (!CLIENTS.includes(client))
    throw new Error(`CLIENTS: unknown client "${client}"; choose from ${CLIENTS}`);

/** Commands per request over the layer's rounds: every B round's commandstats calls / the requests they sent. */
function commandsPerRequest(bRounds: readonly CountedRound[]): Record<string, number> {
  const requests = bRounds.reduce((sum, round) => sum + round.sent, 0);
  const calls: Record<string, number> = {};
  for (const round of bRounds)
    for (const [name, n] of Object.entries(round.commands)) calls[name] = (calls[name] ?? 0) + n;
  return Object.fromEntries(Object.entries(calls).map(([name, n]) => [name, n / Math.max(1, requests)]));
}

const redisProcess = await startRedis();
const admin = new Redis({ port: redisProcess.port, host: '127.0.0.1' });
const redisVersion = /redis_version:(\S+)/.exec(await admin.info('server'))?.[1] ?? 'unknown';
const rows: ClientRow[] = [];
const raw: (Scenario & { client: ClientName })[] = [];

const baseline = await startServer('express', 'baseline', redisProcess.port);
try {
  for (const client of CHOSEN) {
    // Each client's rows on an empty Redis: the rounds leave records behind, and a bigger Redis stalls more often
    // (rehashing, allocation), which would land on the clients measured last.
    await admin.flushall();
    const layer = await startServer('express', 'oncely', redisProcess.port, [], client);
    try {
      for (const workload of WORKLOADS) {
        const replayPrefix = `r-${client}`;
        if (workload === 'replay') await completeReplayKeys(layer, replayPrefix);
        const pairs = await alternatingPairs(
          baseline,
          layer,
          { pairs: PAIRS, roundS: ROUND_S },
          (server, seconds) =>
            withCommands(admin, () => measureRound(server, admin, workload, replayPrefix, seconds)),
        );
        const scenario: Scenario = { framework: 'express', variant: 'oncely', workload, pairs };
        raw.push({ ...scenario, client });
        const stormResult =
          workload === 'unique' ? await storm(layer, admin, `clients-${client}`) : undefined;
        const row: ClientRow = {
          client,
          summary: summarize(scenario, stormResult),
          commands: commandsPerRequest(pairs.map((pair) => pair.b)),
        };
        rows.push(row);
        const commands = Object.entries(row.commands)
          .map(([name, n]) => `${name} ${n.toFixed(2)}`)
          .join(', ');
        console.log(`${client} ${workload}: ${summaryLine(row.summary)}; commands/req ${commands}`);
      }
    } finally {
      await layer.stop();
    }
  }
} finally {
  await baseline.stop();
  admin.disconnect();
  await stopAll([redisProcess]);
}

const markdown = clientsReport(rows, {
  date: new Date().toISOString().slice(0, 10),
  command: COMMAND,
  machine: machine(),
  versions: `express ${packageVersion('express')}, ioredis ${packageVersion('ioredis')}, iovalkey ${packageVersion('iovalkey')}, redis ${packageVersion('redis')}, @valkey/valkey-glide ${packageVersion('@valkey/valkey-glide')}, autocannon ${packageVersion('autocannon')}, Redis ${redisVersion}`,
  pairs: PAIRS,
  roundSeconds: ROUND_S,
});
if (WRITE) {
  mkdirSync(new URL('../results/', import.meta.url), { recursive: true });
  writeFileSync(RAW, JSON.stringify({ rows, raw }, null, 2));
  writeSection('http-clients', markdown);
  console.log('docs/benchmarks.md: section http-clients written');
} else console.log(markdown);
