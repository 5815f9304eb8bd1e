import { createHash } from 'node:crypto';
import { Agent, request } from 'node:http';
import type { Redis } from 'ioredis';
import { BODY } from './measure.js';
import type { ServerProcess } from './processes.js';

export interface StormOutcome {
  readonly keys: number;
  /** Keys whose handler ran more than once (the effect happened twice or more). */
  readonly keysRunTwice: number;
  /** Handler runs in all, against `keys` expected. */
  readonly executions: number;
  /** Keys whose 2xx answers were not all the same bytes. */
  readonly keysWithDifferentBodies: number;
  readonly statuses: Readonly<Record<string, number>>;
}

const KEYS = 20;
const CONCURRENT = 100;

/**
 * The storm-correctness column: 100 concurrent identical requests for each of 20 keys at once against one server,
 * then the handler's executions per key read back from Redis (the handler INCRs `effect:<key>`).
 */
export async function storm(server: ServerProcess, redis: Redis, label: string): Promise<StormOutcome> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const keys = Array.from({ length: KEYS }, (_, index) => `storm-${label}-${index}-${Date.now()}`);
  const statuses: Record<string, number> = {};
  const bodies = new Map<string, Set<string>>();
  await Promise.all(
    keys.flatMap((key) =>
      Array.from({ length: CONCURRENT }, async () => {
        const { status, body } = await post(server.url, key, agent);
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status >= 200 && status < 300) {
          const seen = bodies.get(key) ?? new Set<string>();
          seen.add(createHash('sha256').update(body).digest('hex'));
          bodies.set(key, seen);
        }
      }),
    ),
  );
  agent.destroy();
  let executions = 0;
  let keysRunTwice = 0;
  for (const key of keys) {
    const runs = Number(await redis.get(`effect:${key}`));
    executions += runs;
    if (runs > 1) keysRunTwice++;
  }
  const keysWithDifferentBodies = [...bodies.values()].filter((seen) => seen.size > 1).length;
  return { keys: KEYS, keysRunTwice, executions, keysWithDifferentBodies, statuses };
}

function post(url: string, key: string, agent: Agent): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'idempotency-key': key,
          'content-length': Buffer.byteLength(BODY),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(BODY);
  });
}
