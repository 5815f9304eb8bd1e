import type { Redis } from 'ioredis';
import { RedisStore } from '../../src/stores/redis/index.js';
import { parseCommandStats } from './commandstats.js';
import { type Bench, engineKey, jsonBody, newEngine } from './fixtures.js';

export interface RoundTrips {
  readonly requests: number;
  /** Commands the client sent per request (each awaited before the next step: one round trip each). */
  readonly clientCommands: Record<string, number>;
  /** INFO commandstats per request: the scripts (EVALSHA/EVAL) and, separately, the calls they made inside. */
  readonly serverScripts: number;
  readonly insideScripts: Record<string, number>;
}

const SCRIPT_COMMANDS = new Set(['evalsha', 'eval']);
const MEASURING = new Set(['info', 'config']);

/** Counts what one new request (begin + complete) and one replay (begin) cost through the Engine. */
export async function measureRoundTrips(
  bench: Bench,
  requests = 1_000,
): Promise<{ fresh: RoundTrips; replay: RoundTrips }> {
  const store = new RedisStore({ client: bench.client, prefix: 'rt' });
  const engine = newEngine(store);
  const body = jsonBody(200, 1);
  const execute = (i: number) =>
    engine.execute({
      key: engineKey(`rt-${i}`),
      fingerprint: 'f',
      run: async () => body,
      settle: (result) => ({ keep: true, outcome: { status: 201, headers: [], body: result } }),
    });
  await execute(-1); // loads the scripts on this connection (the first call of each is an EVAL)
  const fresh = await counted(bench, requests, async () => {
    for (let i = 0; i < requests; i++) await execute(i);
  });
  const replay = await counted(bench, requests, async () => {
    for (let i = 0; i < requests; i++) await execute(i);
  });
  return { fresh, replay };
}

async function counted(bench: Bench, requests: number, run: () => Promise<void>): Promise<RoundTrips> {
  const sent = countCommands(bench.client);
  await bench.admin.config('RESETSTAT');
  try {
    await run();
  } finally {
    sent.stop();
  }
  const stats = parseCommandStats(await bench.admin.info('commandstats'));
  const perRequest = (n: number) => Math.round((n / requests) * 100) / 100;
  const insideScripts: Record<string, number> = {};
  let serverScripts = 0;
  for (const [name, calls] of Object.entries(stats)) {
    if (SCRIPT_COMMANDS.has(name)) serverScripts += calls;
    else if (!MEASURING.has(name.split('|')[0]!)) insideScripts[name] = perRequest(calls);
  }
  const clientCommands = Object.fromEntries(
    Object.entries(sent.counts).map(([name, n]) => [name, perRequest(n)]),
  );
  return { requests, clientCommands, serverScripts: perRequest(serverScripts), insideScripts };
}

/** Wraps `sendCommand` to count, by name, every command the client puts on the wire. */
function countCommands(client: Redis): { counts: Record<string, number>; stop(): void } {
  const counts: Record<string, number> = {};
  const original = client.sendCommand;
  client.sendCommand = function (this: Redis, command, ...rest) {
    counts[command.name] = (counts[command.name] ?? 0) + 1;
    return original.call(this, command, ...rest);
  };
  const stop = () => {
    client.sendCommand = original;
  };
  return { counts, stop };
}
