// Redis CPU per script call, counted in instructions: the store's scripts and the minimal two-script layer run
// against a redis-server under valgrind's callgrind, which counts every instruction the server executes. Unlike
// time, the count hardly moves with what else the machine is doing: two runs of the same scripts at the default hz
// gave 150.7k and 152.6k per new request (1.3% apart), the difference being the server's own timer work while the
// calls run, which `--hz 1` keeps smaller. So it says how much more Redis works
// for oncely than for the floor, even on a shared two-core machine. Each row starts on an emptied server: what the
// rows before leave behind (tens of thousands of keys, claims whose 30 s leases run out while later rows run)
// made work that landed in whichever row met it (a labelled complete read 76.6k as the tenth row of a run,
// 68.4-69.1k measured on its own).
// Writes the `redis-instructions` section of docs/benchmarks.md. Run it alone (about 12 minutes on 2 cores):
//   node --import tsx bench/redis/instructions.ts [--calls 1000]   (WRITE=0 only prints)
// Needs valgrind (Debian: apt-get install valgrind).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { freePort } from '../../test/redis/support/redis-server.js';
import { writeSection } from '../write-section.mjs';
import type { Bench } from './fixtures.js';
import { scriptCases } from './script-cost.js';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '1000' } } });
const CALLS = Number(values.calls);
const REPRODUCE = 'node --import tsx bench/redis/instructions.ts';

/** A redis-server under callgrind; `count(step)` is the instructions the server ran per call of `step`. */
async function startCounted(): Promise<{
  client: Redis;
  version: string;
  count: (step: (i: number) => Promise<unknown>) => Promise<number>;
  stop: () => Promise<void>;
}> {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('valgrind is not installed: apt-get install valgrind');
  }
  const dir = mkdtempSync(join(tmpdir(), 'oncely-callgrind-'));
  const port = await freePort();
  const child: ChildProcess = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${dir}/out`,
      'redis-server',
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      // The server's timer (serverCron) runs hz times a second whatever the load: at the default 10, a slow run
      // under valgrind counts more of it per call than a fast one.
      '--hz',
      '1',
      '--dir',
      dir,
    ],
    { stdio: 'ignore' },
  );
  const client = new Redis({ port, host: '127.0.0.1', retryStrategy: () => 300 });
  client.on('error', () => {});
  await new Promise((resolve) => client.once('ready', resolve));
  const version = /redis_version:(\S+)/.exec(await client.info('server'))?.[1] ?? 'unknown';
  const pid = String(child.pid);
  let dumps = 0;
  const control = (flag: string) => execFileSync('callgrind_control', [flag, pid], { stdio: 'ignore' });
  return {
    client,
    version,
    async count(step) {
      control('--zero');
      // One call at a time: with several in flight Redis reads them in one go, and how many it gets per read
      // depends on timing; one at a time, every call pays the same read, parse and reply.
      for (let i = 0; i < CALLS; i++) await step(i);
      control('--dump');
      dumps++;
      const text = readFileSync(`${dir}/out.${dumps}`, 'utf8');
      return Number(/^summary: (\d+)/m.exec(text)?.[1]) / CALLS;
    },
    async stop() {
      client.disconnect();
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * What the parts of a script call cost on their own, as the scripts use them: EVALSHA of an empty script, one
 * argument, and each command or library call the scripts make. Each is one EVALSHA; the row is its count less
 * the empty script's (the first row).
 */
const PARTS: { name: string; lua: string; args: (string | number)[]; setup?: (key: string) => string[] }[] = [
  { name: 'EVALSHA of an empty script (the floor of any call)', lua: 'return 1', args: [] },
  { name: 'an argument (17-byte fingerprint region)', lua: 'return 1', args: ['f'.repeat(17)] },
  { name: 'an argument (206-byte outcome)', lua: 'return 1', args: ['o'.repeat(206)] },
  {
    name: "tonumber of an argument ('1795482858212')",
    lua: 'return tonumber(ARGV[1]) and 1',
    args: ['1795482858212'],
  },
  {
    name: 'GET of a 129-byte record',
    lua: "redis.call('GET', KEYS[1]) return 1",
    args: [],
    setup: () => ['x'.repeat(129)],
  },
  {
    name: 'PTTL (the clock off the key)',
    lua: "redis.call('PTTL', KEYS[1]) return 1",
    args: [],
    setup: () => ['x'],
  },
  {
    name: 'TIME, to ms',
    lua: "local t = redis.call('TIME') return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)",
    args: [],
  },
  {
    name: 'SET … PX of a new 129-byte record',
    lua: "redis.call('SET', KEYS[1], ARGV[1], 'PX', 90000) return 1",
    args: ['x'.repeat(129)],
  },
  {
    name: 'struct.unpack of the 29-byte header (layout 4) and the tag',
    lua: "struct.unpack('>BBHI6I4i4i4i4I3B', ARGV[1]) return 1",
    args: ['\u0004'.repeat(30)],
  },
  {
    name: 'struct.pack of the 29-byte header (layout 4)',
    lua: "struct.pack('>BBHI6I4i4i4i4I3', 4, 112, 1, 1795482858212, 0, 30000, 600000, 0, 30000) return 1",
    args: [],
  },
  {
    name: 'a reply of four numbers ({1, token, attempt, takeover})',
    lua: 'return {1, 1795482858212, 1, 0}',
    args: [],
  },
  {
    name: 'four local functions defined at the top of a script',
    lua: 'local A, B = 1, 2 local function f() return A end local function g() return f() + B end local function h() return g() end local function k() return h() + A end return 1',
    args: [],
  },
];

const counted = await startCounted();
try {
  const bench = { client: counted.client } as unknown as Bench;
  const { cases } = scriptCases(bench);
  const rows: { layer: string; name: string; k: number }[] = [];
  for (const [index, c] of cases.entries()) {
    if (c.layer === 'oncely 0.1') continue;
    await counted.client.flushall();
    // Warm: each script loaded and run once before it is counted.
    await (await c.prepare(`warm${index}`))(0);
    const step = await c.prepare(`count${index}`);
    rows.push({ layer: c.layer, name: c.name, k: (await counted.count(step)) / 1000 });
    console.log(`${c.layer} ${c.name}: ${rows.at(-1)!.k.toFixed(1)} k`);
  }
  const k = (layer: string, name: string) => rows.find((r) => r.layer === layer && r.name === name)?.k ?? NaN;
  const perRequest = (layer: string) => ({
    fresh: k(layer, 'begin: acquire a new key') + k(layer, 'complete (200 B body)'),
    replay: k(layer, 'begin: replay'),
  });
  const oncely = perRequest('oncely');
  const minimal = perRequest('minimal');
  const timed = perRequest('oncely, time as an argument');
  const labelled = perRequest('oncely, labelled');

  const parts: { name: string; k: number }[] = [];
  let floor = 0;
  for (const [index, part] of PARTS.entries()) {
    const sha = (await counted.client.script('LOAD', part.lua)) as string;
    const key = (i: number) => `part${index}:{${i}}`;
    await counted.client.flushall();
    if (part.setup !== undefined)
      for (let i = 0; i < CALLS + 1; i++)
        await counted.client.set(key(i), part.setup(key(i))[0]!, 'PX', 600_000);
    await counted.client.evalsha(sha, 1, key(CALLS), ...part.args);
    const total = (await counted.count((i) => counted.client.evalsha(sha, 1, key(i), ...part.args))) / 1000;
    if (index === 0) floor = total;
    parts.push({ name: part.name, k: index === 0 ? total : total - floor });
    console.log(`${part.name}: ${parts.at(-1)!.k.toFixed(1)} k`);
  }

  const f = (n: number) => n.toFixed(1);
  const part = (start: string) => parts.find((p) => p.name.startsWith(start))?.k ?? Number.NaN;
  // What a new request pays for its guarantees: the clock (TIME in begin, PTTL in complete), the fence's unpack and
  // the header packed by both calls.
  const guarantees = part('TIME') + part('PTTL') + part('struct.unpack') + 2 * part('struct.pack');
  const markdown = [
    '### Redis instructions per script call',
    '',
    `_Measured ${new Date().toISOString().slice(0, 10)} with \`${REPRODUCE}\`: redis-server ${counted.version} (\`--hz 1\`) under valgrind's callgrind, ${CALLS.toLocaleString('en-US')} calls per row, one at a time._`,
    '',
    'Instructions the Redis server executes per call, read, parse, script and reply included: a count, not a',
    'time, so it is the same on a busy machine as on a quiet one. Same records and scripts as the table of Redis',
    'time above.',
    '',
    '| layer | script call | thousand instructions per call |',
    '| --- | --- | ---: |',
    ...rows.map((r) => `| ${r.layer} | ${r.name} | ${f(r.k)} |`),
    '',
    '| per request | oncely | oncely, labelled | oncely, time as an argument | minimal | oncely / minimal | labelled / minimal |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    `| new request (begin + complete) | ${f(oncely.fresh)} k | ${f(labelled.fresh)} k | ${f(timed.fresh)} k | ${f(minimal.fresh)} k | **${(oncely.fresh / minimal.fresh).toFixed(2)}×** | **${(labelled.fresh / minimal.fresh).toFixed(2)}×** |`,
    `| replay | ${f(oncely.replay)} k | ${f(labelled.replay)} k | ${f(timed.replay)} k | ${f(minimal.replay)} k | **${(oncely.replay / minimal.replay).toFixed(2)}×** | **${(labelled.replay / minimal.replay).toFixed(2)}×** |`,
    '',
    'A record with a label (every entry point gives one: over HTTP the method and route template, here',
    "`POST /payments/:id`) is one more argument and the label's bytes in each record; one without has nothing",
    'after its fingerprint region and costs neither.',
    '',
    'Where a call’s instructions go: each part measured as one script call of its own, less the empty script.',
    '',
    '| part | thousand instructions |',
    '| --- | ---: |',
    ...parts.map((p, i) => `| ${p.name} | ${i === 0 ? '' : '+'}${f(p.k)} |`),
    '',
    `What the difference is made of. Both layers make two script calls per new request and one per replay, and`,
    `each call reads the record once and writes it at most once. What oncely adds is what its guarantees need: the server's clock (TIME when a key is`,
    `new, ${f(part('TIME'))} k; PTTL in complete and in a replay, ${f(part('PTTL'))} k), the fence in complete (the record's header`,
    `unpacked before it is written, ${f(part('struct.unpack'))} k), the packed header written by both calls`,
    `(${f(part('struct.pack'))} k each) and more arguments (lease, retention, time, channel: 1–2 k each). The scripts define no`,
    'functions but the 0.1 reader, when they meet a 0.1 record (their shared parts are inlined when they are built), and give their common answers as bare values: a',
    'first claim its token, a replay the record, complete ok or fenced a number. The last two rows above are what',
    'helper functions and a table reply would add to every call.',
    `To be within 1.25× of the minimal layer a new request would have to cost ${f(1.25 * minimal.fresh)} k, ${f(oncely.fresh - 1.25 * minimal.fresh)} k less`,
    `than now, ${oncely.fresh - 1.25 * minimal.fresh > guarantees ? 'more than' : 'about'} what the clock, the fence and the header cost together (${f(guarantees)} k).`,
  ].join('\n');
  console.log(`\n${markdown}\n`);
  if (process.env.WRITE !== '0') {
    writeSection('redis-instructions', markdown);
    console.log('docs/benchmarks.md: section redis-instructions written');
  }
} finally {
  await counted.stop();
}
