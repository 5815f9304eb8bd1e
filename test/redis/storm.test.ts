import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { RedisStore } from '../../src/stores/redis/index.js';
import { type RedisCluster, startCluster } from './support/cluster.js';
import { type RedisProcess, startRedis, stopAll } from './support/redis-server.js';

// 10,000 concurrent begins on ONE key from 4 Node processes (2,500 each), on a standalone server and on a
// 3-master Cluster: exactly one acquires; after it completes, 10,000 more all replay the same bytes.
const PROCESSES = 4;
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
  kinds: Record<string, number>;
  tokens: number[];
  bodies: string[];
}

class Workers {
  readonly #children: ChildProcess[];
  readonly #lines: AsyncIterator<string>[];

  constructor(config: object) {
    this.#children = Array.from({ length: PROCESSES }, () =>
      spawn(process.execPath, ['--import', 'tsx', worker, JSON.stringify(config)], {
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

  /** Sends the command to every process at once and sums their reports. */
  async all(command: string): Promise<Report> {
    for (const child of this.#children) child.stdin!.write(`${command}\n`);
    const reports = (await Promise.all(this.#lines.map((l) => l.next()))).map(
      (l) => JSON.parse(l.value as string) as Report,
    );
    const kinds: Record<string, number> = {};
    for (const r of reports) for (const [k, n] of Object.entries(r.kinds)) kinds[k] = (kinds[k] ?? 0) + n;
    return {
      kinds,
      tokens: reports.flatMap((r) => r.tokens),
      bodies: [...new Set(reports.flatMap((r) => r.bodies))],
    };
  }

  async stop(): Promise<void> {
    const exits = this.#children.map((child) => new Promise((resolve) => child.once('exit', resolve)));
    for (const child of this.#children) child.stdin!.end('exit\n');
    await Promise.all(exits);
  }
}

async function storm(config: { ports: number[]; cluster: boolean }, client: Redis | Cluster): Promise<void> {
  const prefix = `storm-${randomUUID().slice(0, 8)}`;
  const workers = new Workers({ ...config, prefix, count: PER_PROCESS });
  try {
    await workers.ready();
    const key = randomUUID();
    const total = PROCESSES * PER_PROCESS;
    const first = await workers.all(`begin ${key}`);
    assert.deepEqual(first.kinds, { acquired: 1, inProgress: total - 1 });
    const [token] = first.tokens;
    const body = randomBytes(10 * 1024);
    const store = new RedisStore({ client, prefix });
    const outcome = { status: 201, headers: [], body, encoding: 'identity', storage: 'inline' } as const;
    assert.deepEqual(await store.complete({ key, token: token!, outcome, retentionMs: 60_000 }), {
      kind: 'ok',
    });
    const second = await workers.all(`begin ${key}`);
    assert.deepEqual(second.kinds, { replay: total });
    assert.deepEqual(
      second.bodies,
      [createHash('sha256').update(body).digest('hex')],
      'every replay is byte-identical',
    );
  } finally {
    await workers.stop();
  }
}

describe('a storm of begins on one key across processes', () => {
  it(`${PROCESSES} processes x ${PER_PROCESS} on a standalone Redis: exactly one acquires`, async () => {
    const client = new Redis({ port: server!.port, host: '127.0.0.1' });
    try {
      await storm({ ports: [server!.port], cluster: false }, client);
    } finally {
      client.disconnect();
    }
  });

  it(`${PROCESSES} processes x ${PER_PROCESS} on a 3-master Cluster: exactly one acquires`, async () => {
    const client = new Cluster([...cluster!.startupNodes]);
    try {
      await storm({ ports: cluster!.nodes.map((n) => n.port), cluster: true }, client);
    } finally {
      client.disconnect();
    }
  });
});
