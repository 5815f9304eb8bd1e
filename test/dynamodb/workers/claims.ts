// A process of the DynamoDB storm test: its own client and store on the test's dynalite, the real clock.
// Config: one JSON argument { endpoint, table }. Commands on stdin, one JSON line answered for each:
//   begin <key> <count> <leaseMs>   <count> concurrent begins; answers { kinds, acquired: [{ token, attempt, takeover }] }
//   complete <key> <token> <body>   answers the transition's result
//   renew <key> <token> <leaseMs>   answers the transition's result
//   exit
import { createInterface } from 'node:readline';
import type { BeginResult } from '../../../src/core/store.js';
import { DynamoDbStore } from '../../../src/stores/dynamodb/index.js';
import { clientFor } from '../support/dynalite.js';

const { endpoint, table } = JSON.parse(process.argv[2] ?? '{}') as { endpoint: string; table: string };
const client = clientFor(endpoint, { maxAttempts: 1 });
const store = new DynamoDbStore({ client, table });

async function storm(key: string, count: number, leaseMs: number) {
  const kinds: Record<string, number> = {};
  const acquired: { token: number; attempt: number; takeover: boolean }[] = [];
  const bodies = new Set<string>();
  const errors: string[] = [];
  await Promise.all(
    Array.from({ length: count }, async () => {
      let result: BeginResult;
      try {
        result = await store.begin({ key, fingerprint: 'f', leaseMs, retentionMs: 60_000 });
      } catch (error) {
        errors.push(String(error));
        return;
      }
      kinds[result.kind] = (kinds[result.kind] ?? 0) + 1;
      if (result.kind === 'acquired') acquired.push({ ...result });
      if (result.kind === 'replay') bodies.add(Buffer.from(result.outcome.body).toString());
    }),
  );
  return { pid: process.pid, kinds, acquired, bodies: [...bodies], errors };
}

const outcomeOf = (body: string) =>
  ({ status: 201, headers: [], body: Buffer.from(body), encoding: 'identity', storage: 'inline' }) as const;

const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
for await (const line of lines) {
  const [command, key = '', a = '', b = ''] = line.split(' ');
  if (command === 'exit') break;
  const answer =
    command === 'begin'
      ? await storm(key, Number(a), Number(b))
      : command === 'renew'
        ? await store.renew({ key, token: Number(a), leaseMs: Number(b) })
        : await store.complete({ key, token: Number(a), outcome: outcomeOf(b), retentionMs: 60_000 });
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}
client.destroy();
