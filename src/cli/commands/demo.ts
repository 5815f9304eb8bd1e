/**
 * @module `oncely demo`: the example payments service under a storm of duplicate requests, on memory, Redis or
 * PostgreSQL, ending with the exactly-once verdict; `--serve` and `--dashboard` keep it running.
 */
import type { OutboxRelay } from '../../messaging/outbox/relay.js';
import { choiceOption, intOption, parseOptions } from '../args.js';
import { runLiveDashboard } from '../demo/live-dashboard.js';
import { DEMO_SCHEMA, demoLocation } from '../demo/location.js';
import { loadPaymentsServer, type PaymentsServer } from '../demo/payments-server.js';
import { startDemoRelay } from '../demo/relay.js';
import { renderReport } from '../demo/report.js';
import { runStorm } from '../demo/storm.js';
import { CommandFailed, UsageError } from '../errors.js';
import { type OpenedStore, openStore, STORE_KINDS } from '../open-store.js';
import { ProgressBar } from '../progress.js';

export const demoHelp = `oncely demo [--keys 20] [--duplicates 50] [--store memory|redis|postgres] [--processing-ms 50]
oncely demo --serve [--port 3000] [--host 127.0.0.1] [--store memory|redis|postgres] [--processing-ms 50]
oncely demo --store postgres --dashboard [--port 8080] [--processing-ms 50]

  Starts the example payments service (examples/payments) and fires --duplicates concurrent identical
  POST /payments requests for each of --keys idempotency keys over real HTTP, retrying 409s after
  Retry-After (capped at 1 s). Prints the totals and a per-key ledger, and exits 1 if any key executed more
  than once.
  With --serve the service keeps running for curl (exit 1 if it cannot listen, e.g. the port is in use). Redis
  and PostgreSQL are reached through REDIS_URL and DATABASE_URL (localhost by default). The demo keeps to a place
  of its own: the oncely_demo schema on PostgreSQL (which it creates, the one command besides migrate that
  creates anything), the oncely_demo prefix on Redis; an application's records and outbox are never touched.
  With --dashboard (PostgreSQL) the service runs under steady traffic and oncely dashboard shows it live on
  127.0.0.1 (--port), actions on; its demo broker refuses amounts ending in 13, so dead letters appear.`;

export async function demo(argv: readonly string[]): Promise<void> {
  const { values } = parseOptions('demo', argv, {
    keys: { type: 'string' },
    duplicates: { type: 'string' },
    store: { type: 'string' },
    'processing-ms': { type: 'string' },
    serve: { type: 'boolean' },
    dashboard: { type: 'boolean' },
    port: { type: 'string' },
    host: { type: 'string' },
  });
  // Every flag is checked before a store is opened: a mistake is reported at once, with nothing to clean up.
  const kind = choiceOption('store', values.store, STORE_KINDS, 'memory');
  const processingMs = intOption('processing-ms', values['processing-ms'], 50, 0, 60_000);
  if (values.dashboard) {
    if (kind !== 'postgres')
      throw new UsageError(
        'demo: --dashboard runs on --store postgres (the outbox and the event log live there)',
      );
    if (
      values.serve ||
      values.keys !== undefined ||
      values.duplicates !== undefined ||
      values.host !== undefined
    )
      throw new UsageError(
        'demo: --dashboard runs its own traffic on 127.0.0.1; it takes --port and --processing-ms',
      );
    return liveDashboard(
      await openStore(kind, { migrate: true, ...demoLocation(kind) }),
      intOption('port', values.port, 8080, 0, 65_535),
      processingMs,
    );
  }
  if (values.serve) {
    if (values.keys !== undefined || values.duplicates !== undefined)
      throw new UsageError('demo: --keys and --duplicates size the storm; --serve runs no storm');
    const port = intOption('port', values.port, 3000, 0, 65_535);
    const host = values.host ?? '127.0.0.1';
    if (host === '') throw new UsageError('demo: --host must not be empty');
    return serve(await openStore(kind, { migrate: true, ...demoLocation(kind) }), port, host, processingMs);
  }
  if (values.port !== undefined || values.host !== undefined)
    throw new UsageError('demo: --port and --host go with --serve (the storm runs on a free local port)');
  const keys = intOption('keys', values.keys, 20, 1, 1_000);
  const duplicates = intOption('duplicates', values.duplicates, 50, 1, 1_000);
  return storm(
    await openStore(kind, { migrate: true, ...demoLocation(kind) }),
    keys,
    duplicates,
    processingMs,
  );
}

async function serve(opened: OpenedStore, port: number, host: string, processingMs: number): Promise<void> {
  const { pool } = opened;
  let server: PaymentsServer | undefined;
  let relay: OutboxRelay | undefined;
  try {
    const { startPaymentsServer } = await loadPaymentsServer();
    server = await startPaymentsServer({
      store: opened.store,
      ...(pool === undefined ? {} : { postgres: { pool, schema: DEMO_SCHEMA } }),
      port,
      host,
      processingMs,
    }).catch((error: unknown) => {
      throw listenFailure(error, host, port);
    });
    relay =
      pool &&
      (await startDemoRelay(pool, (m) =>
        process.stdout.write(
          `outbox relay published ${m.topic} ${Buffer.from(m.payload).toString('utf8')}\n`,
        ),
      ));
  } catch (error) {
    // The store's connections would keep the process alive after the message; close what was opened.
    await server?.close();
    await opened.close();
    throw error;
  }
  process.stdout.write(serveBanner(server.url, opened.description, relay !== undefined));
  const running = server;
  const stop = async () => {
    await running.close();
    await relay?.stop({ timeoutMs: 5_000 });
    await opened.close();
    process.exit(0);
  };
  process.once('SIGINT', stop).once('SIGTERM', stop);
  return new Promise(() => {});
}

async function liveDashboard(opened: OpenedStore, port: number, processingMs: number): Promise<void> {
  let live: { stop: () => Promise<void> };
  try {
    live = await runLiveDashboard({
      store: opened.store,
      pool: opened.pool!,
      description: opened.description,
      port,
      processingMs,
    });
  } catch (error) {
    await opened.close();
    throw error;
  }
  const stop = async () => {
    await live.stop();
    await opened.close();
    process.exit(0);
  };
  process.once('SIGINT', stop).once('SIGTERM', stop);
  return new Promise(() => {});
}

/** Why the service could not listen, in the user's terms (the flag to change), not as a stack trace. */
function listenFailure(error: unknown, host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE')
    return new CommandFailed(
      `demo: port ${port} on ${host} is in use; stop what listens there or pick another with --port (0 picks a free one)`,
    );
  if (code === 'EACCES')
    return new CommandFailed(
      `demo: no permission to listen on ${host}:${port} (ports below 1024 need privileges); pick another with --port`,
    );
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return new CommandFailed(
      `demo: cannot listen on --host ${host} (${code}): not an address of this machine`,
    );
  if (code !== undefined)
    return new CommandFailed(`demo: cannot listen on ${host}:${port} (${(error as Error).message})`);
  return error;
}

async function storm(
  opened: OpenedStore,
  keys: number,
  duplicates: number,
  processingMs: number,
): Promise<void> {
  const { pool } = opened;
  let server: PaymentsServer | undefined;
  let relay: OutboxRelay | undefined;
  try {
    const { startPaymentsServer } = await loadPaymentsServer();
    server = await startPaymentsServer({
      store: opened.store,
      ...(pool === undefined ? {} : { postgres: { pool, schema: DEMO_SCHEMA } }),
      processingMs,
    });
    const published = new Set<string>();
    relay =
      pool &&
      (await startDemoRelay(pool, (m) =>
        published.add(String((JSON.parse(Buffer.from(m.payload).toString('utf8')) as { id: string }).id)),
      ));
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
        `SELECT id FROM "${DEMO_SCHEMA}".demo_payments WHERE idempotency_key = ANY($1)`,
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
    await server?.close();
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
A body that is empty or not JSON (400), not declared JSON (415) or not a valid payment (422) is not stored:
fix it and retry with the same key.
${relay ? 'Each new payment commits with a payment.created outbox event; the relay prints it when it publishes it.\n' : ''}`;
}
