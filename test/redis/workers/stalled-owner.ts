// A request owner in a process of its own, so the test can stall it for real (SIGSTOP) past its lease.
// argv: port prefix key leaseMs. Prints `running <token>` once its handler runs, then one JSON line at the end.
import { Redis } from 'ioredis';
import { Engine } from '../../../src/core/engine.js';
import { RedisStore } from '../../../src/stores/redis/index.js';

const [port, prefix, key, leaseMs] = process.argv.slice(2);
const client = new Redis({
  port: Number(port),
  host: '127.0.0.1',
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
});
await new Promise((resolve) => client.once('ready', resolve));
const engine = new Engine({ store: new RedisStore({ client, prefix: prefix! }), leaseMs: Number(leaseMs) });

let aborted: string | undefined;
let error: string | undefined;
let token = 0;
try {
  await engine.execute({
    key: key!,
    fingerprint: 'f',
    run: async ({ token: claimed, signal }) => {
      token = claimed;
      process.stdout.write(`running ${claimed}\n`);
      // Work that outlives the lease; it notices the lost claim through its signal, then returns anyway,
      // as code that ignores the signal would: the engine must refuse to store its result.
      await new Promise<void>((resolve) => {
        signal.addEventListener('abort', () => resolve(), { once: true });
        setTimeout(resolve, 20_000);
      });
      aborted = signal.aborted ? String((signal.reason as Error)?.name) : undefined;
      return 'stale owner';
    },
    settle: (result) => ({ keep: true, outcome: { status: 200, headers: [], body: Buffer.from(result) } }),
  });
} catch (e) {
  error = (e as Error).name;
}
process.stdout.write(`${JSON.stringify({ token, aborted, error })}\n`);
client.disconnect();
