// Request owners in a process of their own, one per client named, so the test can stall them for real (SIGSTOP)
// past their lease. argv: port prefix key leaseMs client,client,... Each owner claims `<key>-<client>` through its
// own client. Prints `running <client> <token>` once that owner's handler runs, then one JSON line per owner at the end.
import { Engine } from '../../../src/core/engine.js';
import { RedisStore } from '../../../src/stores/redis/index.js';
import { type ClientName, connectClient } from '../support/clients.js';

const [port, prefix, key, leaseMs, names] = process.argv.slice(2);

async function own(name: ClientName): Promise<void> {
  const made = await connectClient(name, Number(port));
  const engine = new Engine({
    store: new RedisStore({ client: made.client, prefix: prefix! }),
    leaseMs: Number(leaseMs),
  });
  let aborted: string | undefined;
  let error: string | undefined;
  let token = 0;
  try {
    await engine.execute({
      key: `${key}-${name}`,
      fingerprint: 'f',
      run: async ({ token: claimed, signal }) => {
        token = claimed;
        process.stdout.write(`running ${name} ${claimed}\n`);
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
  process.stdout.write(`${JSON.stringify({ client: name, token, aborted, error })}\n`);
  await made.close();
}

await Promise.all(names!.split(',').map((name) => own(name as ClientName)));
