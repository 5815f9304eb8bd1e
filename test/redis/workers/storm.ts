// One process of a cross-process storm, on one client. argv: JSON { client, ports, cluster, prefix, count, glide }.
// stdin commands, one per line: `begin <key>` fires `count` concurrent begins and prints what they got;
// `exit` quits. Prints `ready` once connected with its scripts loaded.
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { isStoreUnavailableError } from '../../../src/core/errors.js';
import { RedisStore } from '../../../src/stores/redis/index.js';
import { type ClientName, connectClient, connectCluster, type GlideSettings } from '../support/clients.js';

const config = JSON.parse(process.argv[2]!) as {
  client: ClientName;
  ports: number[];
  cluster: boolean;
  prefix: string;
  count: number;
  glide: GlideSettings;
};
const { client, ports, cluster, prefix, count } = config;
// The storm checks who wins, not how fast: GLIDE (the one client here with a request timeout) gets time to answer
// thousands of calls queued at once on a busy machine.
const glide = { requestTimeout: 10_000, ...config.glide };
const made = cluster
  ? await connectCluster(
      client,
      ports.map((port) => ({ host: '127.0.0.1', port })),
      { glide },
    )
  : await connectClient(client, ports[0]!, { glide });
const store = new RedisStore({ client: made.client, prefix });
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
    const kind =
      r.status === 'fulfilled'
        ? r.value.kind
        : `${isStoreUnavailableError(r.reason) ? 'unavailable' : 'error'}: ${(r.reason as Error).message}`;
    kinds[kind] = (kinds[kind] ?? 0) + 1;
    if (r.status === 'fulfilled' && r.value.kind === 'acquired') tokens.push(r.value.token);
    if (r.status === 'fulfilled' && r.value.kind === 'replay') {
      bodies.add(createHash('sha256').update(r.value.outcome.body).digest('hex'));
    }
  }
  process.stdout.write(`${JSON.stringify({ client, kinds, tokens, bodies: [...bodies] })}\n`);
}
await made.close();
