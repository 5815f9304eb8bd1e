import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { RedisStore } from '../../src/stores/redis/index.js';
import { minimalLayer } from '../http/minimal.js';
import { type Bench, engineKey, jsonBody, outcomeOf } from './fixtures.js';
import { median } from './report.js';

/** One script measured alone: `INFO commandstats` of EVALSHA over `CALLS` calls, reset before each. */
export interface ScriptCost {
  readonly layer: 'oncely' | 'oncely, labelled' | 'oncely, time as an argument' | 'oncely 0.1' | 'minimal';
  readonly name: string;
  /** Redis µs per call (`usec_per_call` of evalsha), one value per round. */
  readonly usPerCall: number[];
  /** What each call did inside the script (calls per script run, from commandstats). */
  inside: Record<string, number>;
}

const CALLS = 2_000;
const IN_FLIGHT = 64;
const RETENTION_MS = 600_000;
const LEASE_MS = 30_000;
// A fingerprint as the HTTP adapters make it: SHA-256, base64url.
const FINGERPRINT = engineKey('fingerprint');

type Step = (i: number) => Promise<unknown>;
interface Case {
  readonly layer: ScriptCost['layer'];
  readonly name: string;
  /** Runs before the measurement (not counted); returns the measured step. */
  readonly prepare: (round: string) => Promise<Step>;
}

const legacyLua = (name: string) =>
  readFileSync(new URL(`../../test/redis/fixtures/oncely-0.1/${name}.lua`, import.meta.url), 'utf8');

/**
 * Each script of the store, the 0.1 scripts (a HASH per record) and the minimal two-script layer of
 * bench/http/minimal.ts, measured in the same run on the same server: what Redis spends inside one EVALSHA.
 */
export function scriptCases(bench: Bench): { cases: Case[]; run: (step: Step) => Promise<void> } {
  const store = new RedisStore({ client: bench.client, prefix: 'cost' });
  const minimal = minimalLayer(bench.client);
  const body = jsonBody(200, 3);
  const outcome = outcomeOf(body);
  const key = (round: string, i: number) => engineKey(`${round}-${i}`);
  const each = async (step: Step) => {
    for (let i = 0; i < CALLS; i += IN_FLIGHT) {
      await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, CALLS - i) }, (_, j) => step(i + j)));
    }
  };
  const claimed = async (round: string) => {
    const tokens: number[] = [];
    await each(async (i) => {
      const r = await store.begin({
        key: key(round, i),
        fingerprint: FINGERPRINT,
        leaseMs: LEASE_MS,
        retentionMs: RETENTION_MS,
      });
      if (r.kind !== 'acquired') throw new Error(`expected acquired, got ${r.kind}`);
      tokens[i] = r.token;
    });
    return tokens;
  };
  const completed = async (round: string) => {
    const tokens = await claimed(round);
    await each((i) =>
      store.complete({ key: key(round, i), token: tokens[i]!, outcome, retentionMs: RETENTION_MS }),
    );
  };
  const begin = (round: string, i: number) =>
    store.begin({
      key: key(round, i),
      fingerprint: FINGERPRINT,
      leaseMs: LEASE_MS,
      retentionMs: RETENTION_MS,
    });

  // Records with a label, as every entry point now gives one (over HTTP the method and route template).
  const LABEL = 'POST /payments/:id';
  const labelledBegin = (round: string, i: number) =>
    store.begin({
      key: key(round, i),
      fingerprint: FINGERPRINT,
      leaseMs: LEASE_MS,
      retentionMs: RETENTION_MS,
      label: LABEL,
    });
  const labelledClaims = async (round: string) => {
    const tokens: number[] = [];
    await each(async (i) => {
      const r = await labelledBegin(round, i);
      if (r.kind !== 'acquired') throw new Error(`expected acquired, got ${r.kind}`);
      tokens[i] = r.token;
    });
    return tokens;
  };

  // The same scripts with the time passed in (as tests do): what reading TIME costs.
  const timed = new RedisStore({ client: bench.client, prefix: 'cost-clock', clock: Date.now });
  const timedBegin = (round: string, i: number) =>
    timed.begin({
      key: key(round, i),
      fingerprint: FINGERPRINT,
      leaseMs: LEASE_MS,
      retentionMs: RETENTION_MS,
    });
  const timedClaims = async (round: string) => {
    const tokens: number[] = [];
    await each(async (i) => {
      const r = await timedBegin(round, i);
      if (r.kind !== 'acquired') throw new Error(`expected acquired, got ${r.kind}`);
      tokens[i] = r.token;
    });
    return tokens;
  };

  const old = legacy(bench.client);
  const oldKey = (round: string, i: number) => `old:{${key(round, i)}}`;
  const minKey = (round: string, i: number) => `${round}-${i}`;

  const cases: Case[] = [
    { layer: 'oncely', name: 'begin: acquire a new key', prepare: async (round) => (i) => begin(round, i) },
    {
      layer: 'oncely',
      name: 'complete (200 B body)',
      prepare: async (round) => {
        const tokens = await claimed(round);
        return (i) =>
          store.complete({ key: key(round, i), token: tokens[i]!, outcome, retentionMs: RETENTION_MS });
      },
    },
    {
      layer: 'oncely',
      name: 'begin: replay',
      prepare: async (round) => {
        await completed(round);
        return (i) => begin(round, i);
      },
    },
    {
      layer: 'oncely',
      name: 'begin: in progress (duplicate)',
      prepare: async (round) => {
        await claimed(round);
        return (i) => begin(round, i);
      },
    },
    {
      layer: 'oncely',
      name: 'renew',
      prepare: async (round) => {
        const tokens = await claimed(round);
        return (i) => store.renew({ key: key(round, i), token: tokens[i]!, leaseMs: LEASE_MS });
      },
    },
    {
      layer: 'oncely',
      name: 'release',
      prepare: async (round) => {
        const tokens = await claimed(round);
        return (i) => store.release({ key: key(round, i), token: tokens[i]! });
      },
    },
    {
      layer: 'oncely',
      name: 'get (completed)',
      prepare: async (round) => {
        await completed(round);
        return (i) => store.get(key(round, i));
      },
    },
    {
      layer: 'oncely',
      name: 'delete (completed)',
      prepare: async (round) => {
        await completed(round);
        return (i) => store.delete(key(round, i));
      },
    },
    {
      layer: 'oncely, labelled',
      name: 'begin: acquire a new key',
      prepare: async (round) => (i) => labelledBegin(round, i),
    },
    {
      layer: 'oncely, labelled',
      name: 'complete (200 B body)',
      prepare: async (round) => {
        const tokens = await labelledClaims(round);
        return (i) =>
          store.complete({ key: key(round, i), token: tokens[i]!, outcome, retentionMs: RETENTION_MS });
      },
    },
    {
      layer: 'oncely, labelled',
      name: 'begin: replay',
      prepare: async (round) => {
        const tokens = await labelledClaims(round);
        await each((i) =>
          store.complete({ key: key(round, i), token: tokens[i]!, outcome, retentionMs: RETENTION_MS }),
        );
        return (i) => labelledBegin(round, i);
      },
    },
    {
      layer: 'oncely, time as an argument',
      name: 'begin: acquire a new key',
      prepare: async (round) => (i) => timedBegin(round, i),
    },
    {
      layer: 'oncely, time as an argument',
      name: 'complete (200 B body)',
      prepare: async (round) => {
        const tokens = await timedClaims(round);
        return (i) =>
          timed.complete({ key: key(round, i), token: tokens[i]!, outcome, retentionMs: RETENTION_MS });
      },
    },
    {
      layer: 'oncely, time as an argument',
      name: 'begin: replay',
      prepare: async (round) => {
        const tokens = await timedClaims(round);
        await each((i) =>
          timed.complete({ key: key(round, i), token: tokens[i]!, outcome, retentionMs: RETENTION_MS }),
        );
        return (i) => timedBegin(round, i);
      },
    },
    {
      layer: 'oncely 0.1',
      name: 'begin: acquire a new key',
      prepare: async (round) => (i) => old.begin(oldKey(round, i)),
    },
    {
      layer: 'oncely 0.1',
      name: 'complete (200 B body)',
      prepare: async (round) => {
        const tokens: number[] = [];
        await each(async (i) => {
          tokens[i] = await old.begin(oldKey(round, i));
        });
        return (i) => old.complete(oldKey(round, i), tokens[i]!, body);
      },
    },
    {
      layer: 'oncely 0.1',
      name: 'begin: replay',
      prepare: async (round) => {
        await each(async (i) => old.complete(oldKey(round, i), await old.begin(oldKey(round, i)), body));
        return (i) => old.begin(oldKey(round, i));
      },
    },
    {
      layer: 'minimal',
      name: 'begin: acquire a new key',
      prepare: async (round) => (i) => minimal.start(minKey(round, i), FINGERPRINT),
    },
    {
      layer: 'minimal',
      name: 'complete (200 B body)',
      prepare: async (round) => {
        await each((i) => minimal.start(minKey(round, i), FINGERPRINT));
        return (i) => minimal.complete(minKey(round, i), body.toString());
      },
    },
    {
      layer: 'minimal',
      name: 'begin: replay',
      prepare: async (round) => {
        await each(async (i) => {
          await minimal.start(minKey(round, i), FINGERPRINT);
          await minimal.complete(minKey(round, i), body.toString());
        });
        return (i) => minimal.start(minKey(round, i), FINGERPRINT);
      },
    },
  ];
  return { cases, run: each };
}

/** Every case, `rounds` times in alternating order; the store's scripts are loaded before the first round. */
export async function measureScriptCosts(bench: Bench, rounds: number): Promise<ScriptCost[]> {
  const { cases, run } = scriptCases(bench);
  const costs: ScriptCost[] = cases.map((c) => ({ layer: c.layer, name: c.name, usPerCall: [], inside: {} }));
  // Warm-up: every script loaded on the connection (the first call of each is an EVAL).
  for (const [i, c] of cases.entries()) await run(await c.prepare(`warm${i}`));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [...cases.keys()] : [...cases.keys()].reverse();
    for (const i of order) {
      const c = cases[i]!;
      const step = await c.prepare(`r${round}c${i}`);
      await bench.admin.config('RESETSTAT');
      await run(step);
      const stats = parseStats(await bench.admin.info('commandstats'));
      const evalsha = stats.get('evalsha');
      if (evalsha === undefined || evalsha.calls !== CALLS) {
        throw new Error(`${c.layer} ${c.name}: expected ${CALLS} EVALSHA, saw ${evalsha?.calls}`);
      }
      costs[i]!.usPerCall.push(evalsha.usec / evalsha.calls);
      const inside: Record<string, number> = {};
      for (const [name, { calls }] of stats) {
        if (!['evalsha', 'config', 'info'].includes(name.split('|')[0]!)) inside[name] = calls / CALLS;
      }
      costs[i]!.inside = inside;
    }
    process.stdout.write(`script costs: round ${round + 1}/${rounds} done\n`);
  }
  return costs;
}

/**
 * The machine's 2 cores are shared with other work, which only ever adds time: the least-disturbed round (the
 * minimum) is the estimate, the median shows how much the load moved it.
 */
export function scriptCostTable(costs: readonly ScriptCost[], rounds: number): string {
  const find = (layer: ScriptCost['layer'], name: string) =>
    Math.min(...costs.find((c) => c.layer === layer && c.name === name)!.usPerCall);
  const perRequest = (layer: ScriptCost['layer']) =>
    find(layer, 'begin: acquire a new key') + find(layer, 'complete (200 B body)');
  const spread = (values: readonly number[]) =>
    `**${Math.min(...values).toFixed(2)}** (median ${median(values).toFixed(2)})`;
  const list = (inside: Record<string, number>) =>
    Object.entries(inside)
      .sort()
      .map(([name, n]) => `${name} ${Number(n.toFixed(2))}`)
      .join(', ');
  const fresh = {
    oncely: perRequest('oncely'),
    timed: perRequest('oncely, time as an argument'),
    old: perRequest('oncely 0.1'),
    minimal: perRequest('minimal'),
  };
  const replay = {
    oncely: find('oncely', 'begin: replay'),
    timed: find('oncely, time as an argument', 'begin: replay'),
    old: find('oncely 0.1', 'begin: replay'),
    minimal: find('minimal', 'begin: replay'),
  };
  return [
    `What Redis spends inside one script call: \`usec_per_call\` of EVALSHA in \`INFO commandstats\`, reset before`,
    `each case, ${CALLS.toLocaleString('en')} calls per case with ${IN_FLIGHT} in flight, ${rounds} rounds in alternating`,
    'order. The 2 cores are shared with other work, which only ever adds time, so the least-disturbed round',
    '(the minimum) is the estimate; the median shows the noise. Records are written as the engine writes them (a 43-character',
    'fingerprint, a 200-byte JSON body with `content-type: application/json`), time from Redis `TIME`.',
    '**oncely, time as an argument** passes the time in (as the tests’ clock does) instead of reading `TIME`: the',
    'difference is what the server clock costs. **oncely 0.1** runs the previous release’s scripts (one HASH per',
    'record) and **minimal** the two-script layer',
    'of `bench/http/minimal.ts` (no fencing, lease, clock or expiry), on the same server in the same run.',
    '',
    '| layer | script call | Redis µs per call, min (median) | calls inside the script |',
    '| --- | --- | --- | --- |',
    ...costs.map((c) => `| ${c.layer} | ${c.name} | ${spread(c.usPerCall)} | ${list(c.inside)} |`),
    '',
    'Per request, from the minima above:',
    '',
    '| per request | oncely µs | oncely, time as an argument µs | oncely 0.1 µs | minimal µs | oncely / minimal | time as an argument / minimal | 0.1 / minimal |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...(
      [
        ['new request (begin + complete)', fresh],
        ['replay (begin)', replay],
      ] as const
    ).map(
      ([name, r]) =>
        `| ${name} | ${r.oncely.toFixed(2)} | ${r.timed.toFixed(2)} | ${r.old.toFixed(2)} | ${r.minimal.toFixed(2)} | **${(r.oncely / r.minimal).toFixed(2)}×** | ${(r.timed / r.minimal).toFixed(2)}× | ${(r.old / r.minimal).toFixed(2)}× |`,
    ),
  ].join('\n');
}

/** The 0.1 scripts, run the way 0.1's store ran them (channel given, time from TIME). */
function legacy(client: Redis) {
  client.defineCommand('oncely01Begin', { numberOfKeys: 1, lua: legacyLua('begin-1') });
  client.defineCommand('oncely01Complete', { numberOfKeys: 1, lua: legacyLua('complete-1') });
  const commands = client as unknown as {
    oncely01Begin(key: string, ...args: (string | number)[]): Promise<number[]>;
    oncely01Complete(key: string, ...args: (string | number | Buffer)[]): Promise<number[]>;
  };
  return {
    async begin(key: string): Promise<number> {
      const reply = await commands.oncely01Begin(key, FINGERPRINT, LEASE_MS, RETENTION_MS, '');
      return reply[1]!;
    },
    complete: (key: string, token: number, body: Buffer) =>
      commands.oncely01Complete(
        key,
        token,
        RETENTION_MS,
        '',
        `old:settled:${key}`,
        201,
        JSON.stringify([['content-type', 'application/json']]),
        body,
        'identity',
        'inline',
      ),
  };
}

function parseStats(info: string): Map<string, { calls: number; usec: number }> {
  const stats = new Map<string, { calls: number; usec: number }>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    stats.set(match[1]!, { calls: Number(match[2]), usec: Number(match[3]) });
  }
  return stats;
}
