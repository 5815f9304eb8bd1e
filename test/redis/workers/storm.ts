// One process of a cross-process storm. argv: JSON { ports, cluster, prefix, count }.
// stdin commands, one per line: `begin <key>` fires `count` concurrent begins and prints what they got;
// `exit` quits. Prints `ready` once connected with its scripts loaded.
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { Cluster, Redis } from 'ioredis';
import { RedisStore } from '../../../src/stores/redis/index.js';

const { ports, cluster, prefix, count } = JSON.parse(process.argv[2]!) as {
  ports: number[];
  cluster: boolean;
  prefix: string;
  count: number;
};
const nodes = ports.map((port) => ({ host: '127.0.0.1', port }));
const client = cluster
  ? new Cluster(nodes, { enableOfflineQueue: false, redisOptions: { maxRetriesPerRequest: 0 } })
  : new Redis({ ...nodes[0], enableOfflineQueue: false, maxRetriesPerRequest: 0 });
await new Promise((resolve) => client.once('ready', resolve));
const store = new RedisStore({ client, prefix });
await store.begin({ key: `warm-up-${process.pid}`, fingerprint: 'f', leaseMs: 1_000, retentionMs: 1_000 });
process.stdout.write('ready\n');

for await (const line of createInterface({ input: process.stdin })) {
  const [command, key] = line.split(' ');
  if (command === 'exit') break;
  const results = await Promise.allSettled(
    Array.from({ length: count }, () =>
      store.begin({ key: key!, fingerprint: 'f', leaseMs: 60_000, retentionMs: 60_000 }),
    ),
  );
  const kinds: Record<string, number> = {};
  const tokens: number[] = [];
  const bodies = new Set<string>();
  for (const r of results) {
    const kind = r.status === 'fulfilled' ? r.value.kind : `error: ${(r.reason as Error).message}`;
    kinds[kind] = (kinds[kind] ?? 0) + 1;
    if (r.status === 'fulfilled' && r.value.kind === 'acquired') tokens.push(r.value.token);
    if (r.status === 'fulfilled' && r.value.kind === 'replay') {
      bodies.add(createHash('sha256').update(r.value.outcome.body).digest('hex'));
    }
  }
  process.stdout.write(`${JSON.stringify({ kinds, tokens, bodies: [...bodies] })}\n`);
}
client.disconnect();
