import { choiceOption, intOption, parseOptions } from '../args.js';
import { loadPaymentsServer } from '../demo/payments-server.js';
import { startDemoRelay } from '../demo/relay.js';
import { renderReport } from '../demo/report.js';
import { runStorm } from '../demo/storm.js';
import { CommandFailed } from '../errors.js';
import { openStore, STORE_KINDS } from '../open-store.js';
import { ProgressBar } from '../progress.js';

export const demoHelp = `oncely demo [--keys 20] [--duplicates 50] [--store memory|redis|postgres] [--processing-ms 50]
oncely demo --serve [--port 3000] [--host 127.0.0.1] [--store memory|redis|postgres]

  Starts the example payments service (examples/payments) and fires --duplicates concurrent identical
  POST /payments requests for each of --keys idempotency keys over real HTTP, retrying 409s as clients do. Prints
  the totals and a per-key ledger, and exits 1 if any key executed more than once.
  With --serve the service keeps running for curl. Redis and PostgreSQL are reached through REDIS_URL and
  DATABASE_URL (localhost by default).`;

export async function demo(argv: readonly string[]): Promise<void> {
  const { values } = parseOptions('demo', argv, {
    keys: { type: 'string' },
    duplicates: { type: 'string' },
    store: { type: 'string' },
    'processing-ms': { type: 'string' },
    serve: { type: 'boolean' },
    port: { type: 'string' },
    host: { type: 'string' },
  });
  const kind = choiceOption('store', values.store, STORE_KINDS, 'memory');
  const processingMs = intOption('processing-ms', values['processing-ms'], 50, 0, 60_000);
  // The demo is a sandbox: it creates its tables, the one command besides migrate that does.
  const opened = await openStore(kind, { migrate: true });
  const { pool } = opened;
  const { startPaymentsServer } = await loadPaymentsServer();
  const postgres = pool === undefined ? {} : { postgres: { pool } };
  if (values.serve) {
    const port = intOption('port', values.port, 3000, 0, 65_535);
    const server = await startPaymentsServer({
      store: opened.store,
      ...postgres,
      port,
      host: values.host ?? '127.0.0.1',
      processingMs,
    });
    const relay =
      pool &&
      (await startDemoRelay(pool, (m) =>
        process.stdout.write(
          `outbox relay published ${m.topic} ${Buffer.from(m.payload).toString('utf8')}\n`,
        ),
      ));
    process.stdout.write(serveBanner(server.url, opened.description, relay !== undefined));
    const stop = async () => {
      await server.close();
      await relay?.stop({ timeoutMs: 5_000 });
      await opened.close();
      process.exit(0);
    };
    process.once('SIGINT', stop).once('SIGTERM', stop);
    return new Promise(() => {});
  }
  const keys = intOption('keys', values.keys, 20, 1, 1_000);
  const duplicates = intOption('duplicates', values.duplicates, 50, 1, 1_000);
  const server = await startPaymentsServer({ store: opened.store, ...postgres, processingMs });
  const published = new Set<string>();
  const relay =
    pool &&
    (await startDemoRelay(pool, (m) =>
      published.add(String((JSON.parse(Buffer.from(m.payload).toString('utf8')) as { id: string }).id)),
    ));
  try {
    process.stdout.write(
      `oncely demo: ${keys} keys × ${duplicates} concurrent duplicates = ${keys * duplicates} requests\n` +
        `store: ${opened.description}; service: ${server.url}\n\n`,
    );
    const progress = new ProgressBar('requests', keys * duplicates);
    const started = performance.now();
    const outcomes = await runStorm({ url: server.url, keys, duplicates, onAnswer: () => progress.tick() });
    progress.finish();
    const seconds = (performance.now() - started) / 1_000;
    const report = renderReport(outcomes, await server.executions(outcomes.map((o) => o.key)), seconds);
    process.stdout.write(`\n${report.text}\n`);
    let relayed = true;
    if (pool !== undefined) {
      const { rows } = await pool.query<{ id: string }>(
        'SELECT id FROM demo_payments WHERE idempotency_key = ANY($1)',
        [outcomes.map((o) => o.key)],
      );
      relayed = await eventually(() => rows.every((row) => published.has(row.id)), 15_000);
      process.stdout.write(
        relayed
          ? `Outbox: the relay published one payment.created event for each of the ${rows.length} payments, written in the same transaction as the payment and its key.\n`
          : `Outbox: FAILED: not every payment's event was published within 15 s.\n`,
      );
    }
    if (!report.exactlyOnce || !relayed)
      throw new CommandFailed(
        'a key executed more than once, answered differently, or its event was not published',
      );
  } finally {
    await server.close();
    await relay?.stop({ timeoutMs: 5_000 });
    await opened.close();
  }
}

async function eventually(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

function serveBanner(url: string, store: string, relay: boolean): string {
  return `payments service on ${url} (store: ${store}); Ctrl-C stops it.

  curl -i -X POST ${url}/payments \\
    -H 'Idempotency-Key: order-42' -H 'Content-Type: application/json' \\
    -d '{"amount": 1999, "currency": "EUR"}'

Send it twice: the second answer is the same payment, with Idempotent-Replayed: true.
Change the body under the same key: 422. Leave out the key: 400.
${relay ? 'Each new payment commits with a payment.created outbox event; the relay prints it when it publishes it.\n' : ''}`;
}
