/**
 * @module 10,000 concurrent begins on ONE key from 4 Node processes (2,500 each), one process per client (ioredis,
 * iovalkey, node-redis, GLIDE), on a standalone server and on a 3-master Cluster: exactly one acquires; after it
 * completes, 10,000 more all replay the same bytes, on every client.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { RedisStore } from '../../src/stores/redis/index.js';
import { CLIENTS, type ClientName } from './support/clients.js';
import { type RedisCluster, startCluster } from './support/cluster.js';
import { type RedisProcess, startRedis, stopAll } from './support/redis-server.js';

const PROCESSES = CLIENTS.length;
const PER_PROCESS = 2_500;
const worker = new URL('./workers/storm.ts', import.meta.url).pathname;

let server: RedisProcess | undefined;
let cluster: RedisCluster | undefined;

beforeAll(async () => {
  [server, cluster] = await Promise.all([startRedis(), startCluster(3)]);
}, 60_000);

afterAll(async () => {
  await Promise.all([stopAll([server]), cluster?.stop()]);
});

interface Report {
  client: ClientName;
  kinds: Record<string, number>;
  tokens: number[];
  bodies: string[];
}

class Workers {
  readonly #children: ChildProcess[];
  readonly #lines: AsyncIterator<string>[];

  constructor(config: object) {
    this.#children = CLIENTS.map((client) =>
      spawn(process.execPath, ['--import', 'tsx', worker, JSON.stringify({ ...config, client })], {
        stdio: ['pipe', 'pipe', 'inherit'],
      }),
    );
    this.#lines = this.#children.map((child) =>
      createInterface({ input: child.stdout! })[Symbol.asyncIterator](),
    );
  }

  async ready(): Promise<void> {
    const lines = await Promise.all(this.#lines.map((l) => l.next()));
    assert.deepEqual(
      lines.map((l) => l.value),
      this.#children.map(() => 'ready'),
    );
  }

  /** Sends the command to every process at once and returns their reports, one per client. */
  async all(command: string): Promise<Report[]> {
    for (const child of this.#children) child.stdin!.write(`${command}\n`);
    return (await Promise.all(this.#lines.map((l) => l.next()))).map(
      (l) => JSON.parse(l.value as string) as Report,
    );
  }

  async stop(): Promise<void> {
    const exits = this.#children.map((child) => new Promise((resolve) => child.once('exit', resolve)));
    for (const child of this.#children) child.stdin!.end('exit\n');
    await Promise.all(exits);
  }
}

/** What a report's begins got besides `expected`: nothing, or (GLIDE at its default limit) the limit's refusals. */
function refusals(report: Report, expected: readonly string[], glideLimit: number | undefined): number {
  const others = Object.entries(report.kinds).filter(([kind]) => !expected.includes(kind));
  if (report.client !== 'glide' || glideLimit !== undefined) {
    assert.deepEqual(others, [], `${report.client}: every begin answered`);
    return 0;
  }
  // GLIDE refuses a call at once while 1,000 of its calls await replies: fail closed, as StoreUnavailableError.
  for (const [kind] of others) assert.match(kind, /^unavailable: .*maximum inflight requests/);
  return others.reduce((sum, [, n]) => sum + n, 0);
}

/**
 * One process per client fires PER_PROCESS begins at once on one key, twice: before and after its winner completes.
 * `glideLimit`: GLIDE's `inflightRequestsLimit`, left at its default (1,000) when not given.
 */
async function storm(
  config: { ports: number[]; cluster: boolean; glideLimit?: number },
  client: Redis | Cluster,
): Promise<void> {
  const prefix = `storm-${randomUUID().slice(0, 8)}`;
  const { glideLimit, ...where } = config;
  const glide = glideLimit === undefined ? {} : { inflightRequestsLimit: glideLimit };
  const workers = new Workers({ ...where, prefix, count: PER_PROCESS, glide });
  try {
    await workers.ready();
    const key = randomUUID();
    const first = await workers.all(`begin ${key}`);
    const acquired = first.flatMap((r) => r.tokens);
    assert.equal(acquired.length, 1, `one acquires across every process: ${JSON.stringify(first)}`);
    for (const r of first) {
      const { acquired: won = 0, inProgress = 0 } = r.kinds;
      const refused = refusals(r, ['acquired', 'inProgress'], glideLimit);
      assert.equal(won + inProgress + refused, PER_PROCESS, `${r.client}: every begin accounted for`);
    }
    const body = randomBytes(10 * 1024);
    const store = new RedisStore({ client, prefix });
    const outcome = { status: 201, headers: [], body, encoding: 'identity', storage: 'inline' } as const;
    assert.deepEqual(await store.complete({ key, token: acquired[0]!, outcome, retentionMs: 60_000 }), {
      kind: 'ok',
    });
    const second = await workers.all(`begin ${key}`);
    const digest = createHash('sha256').update(body).digest('hex');
    for (const r of second) {
      const refused = refusals(r, ['replay'], glideLimit);
      assert.equal(r.kinds.replay ?? 0, PER_PROCESS - refused, `${r.client}: every answered begin replays`);
      if (refused < PER_PROCESS)
        assert.deepEqual(r.bodies, [digest], `${r.client}: every replay is byte-identical`);
    }
  } finally {
    await workers.stop();
  }
}

describe('a storm of begins on one key across processes', () => {
  it(`${PROCESSES} processes (${CLIENTS.join(', ')}) x ${PER_PROCESS} on a standalone Redis: exactly one acquires; GLIDE at its default limit refuses the calls past 1,000 in flight`, async () => {
    const client = new Redis({ port: server!.port, host: '127.0.0.1' });
    try {
      // GLIDE as its page's example makes it: at its default limit, the calls past 1,000 at once are refused.
      await storm({ ports: [server!.port], cluster: false }, client);
    } finally {
      client.disconnect();
    }
  });

  it(`${PROCESSES} processes (${CLIENTS.join(', ')}) x ${PER_PROCESS} on a 3-master Cluster: exactly one acquires`, async () => {
    const client = new Cluster([...cluster!.startupNodes]);
    try {
      // GLIDE with room for its 2,500 calls at once, as docs/stores/redis.md recommends for such a process.
      await storm({ ports: cluster!.nodes.map((n) => n.port), cluster: true, glideLimit: 10_000 }, client);
    } finally {
      client.disconnect();
    }
  });
});
