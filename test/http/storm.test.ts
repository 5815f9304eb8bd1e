import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireService, services } from '../support/services.js';

const run = promisify(execFile);
const worker = (name: string) => fileURLToPath(new URL(`./workers/${name}`, import.meta.url));
const prefix = `oncely-http-storm-${randomUUID().slice(0, 8)}`;
const ADAPTERS = ['express', 'fastify', 'hono', 'node'] as const;
const ROUTES = ['/wait', '/conflict'] as const;
const KEYS = 20;
const CLIENTS = 2;
const PER_KEY_PER_CLIENT = 50;

type Ports = Record<(typeof ADAPTERS)[number], number>;
type ClientResult = Record<
  string,
  Record<string, { statuses: Record<string, number>; bodies: string[]; replayed: number }>
>;

let redis: Redis;
const servers: ChildProcess[] = [];
const ports: Ports[] = [];

async function startServer(): Promise<Ports> {
  const child = spawn(process.execPath, ['--import', 'tsx', worker('storm-server.ts'), prefix, '100'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  servers.push(child);
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`storm server exited with ${code}`)));
  });
  return (JSON.parse(line) as { ports: Ports }).ports;
}

beforeAll(async () => {
  await requireService('redis');
  redis = new Redis(services.redis.url);
  ports.push(...(await Promise.all([startServer(), startServer()])));
});

afterAll(async () => {
  for (const server of servers) server.stdin?.end();
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

/**
 * One execution per key over real sockets and across processes: two server processes (each serving all four adapters,
 * sharing Redis) and two client processes; per adapter and route, 100 concurrent identical requests for each of
 * 20 keys. Every key must run exactly once, every 2xx body of a key must be the same bytes, and a sequential
 * retry afterwards must replay it.
 */
describe('storm across processes (Redis store)', () => {
  it('100 concurrent identical requests × 20 keys per adapter: one execution per key, identical 2xx bodies, replays after', async () => {
    // Keys per target: the adapters serve the same routes on one store, so a shared key would be one record.
    const keysOf = (target: string) =>
      Array.from({ length: KEYS }, (_, index) => `storm-${target}-${index}-${randomUUID()}`);
    const targets = ADAPTERS.flatMap((adapter) =>
      ROUTES.map((route) => ({
        name: `${adapter}${route}`,
        urls: ports.map((byAdapter) => `http://127.0.0.1:${byAdapter[adapter]}${route}`),
        keys: keysOf(`${adapter}${route}`),
      })),
    );
    const config = JSON.stringify({ targets, perKey: PER_KEY_PER_CLIENT });
    const outputs = await Promise.all(
      Array.from({ length: CLIENTS }, () =>
        run(process.execPath, ['--import', 'tsx', worker('storm-client.ts')], {
          env: { ...process.env, STORM_CONFIG: config },
          maxBuffer: 64 * 1024 * 1024,
        }),
      ),
    );
    const results = outputs.map(({ stdout }) => JSON.parse(stdout) as ClientResult);

    for (const adapter of ADAPTERS) {
      for (const route of ROUTES) {
        const target = `${adapter}${route}`;
        for (const key of targets.find((candidate) => candidate.name === target)!.keys) {
          const executions = Number(await redis.get(`${prefix}:executions:${adapter}:${route}:${key}`));
          const perClient = results.map((result) => result[target]![key]!);
          expect(executions, `${target} ${key}: ${JSON.stringify(perClient)}`).toBe(1);
          const statuses: Record<string, number> = {};
          for (const entry of perClient)
            for (const [status, count] of Object.entries(entry.statuses))
              statuses[status] = (statuses[status] ?? 0) + count;
          const bodies = new Set(perClient.flatMap((entry) => entry.bodies));
          expect(bodies.size, `${target} ${key}: distinct 2xx bodies`).toBe(1);
          if (route === '/wait') {
            expect(statuses, `${target} ${key}`).toEqual({ 201: CLIENTS * PER_KEY_PER_CLIENT });
            expect(perClient.reduce((sum, entry) => sum + entry.replayed, 0)).toBe(
              CLIENTS * PER_KEY_PER_CLIENT - 1,
            );
          } else {
            expect(
              Object.keys(statuses).every((status) => status === '201' || status === '409'),
              JSON.stringify(statuses),
            ).toBe(true);
            expect(statuses['201']).toBeGreaterThanOrEqual(1);
          }
          const retry = await fetch(`http://127.0.0.1:${ports[0]![adapter]}${route}`, {
            method: 'POST',
            headers: { 'idempotency-key': key, 'content-type': 'application/json' },
            body: '{"amount":100,"currency":"EUR"}',
          });
          expect(retry.status).toBe(201);
          expect(retry.headers.get('idempotent-replayed')).toBe('true');
          const digest = createHash('sha256')
            .update(Buffer.from(await retry.arrayBuffer()))
            .digest('hex');
          expect(bodies.has(digest)).toBe(true);
        }
      }
    }
  }, 120_000);
});
