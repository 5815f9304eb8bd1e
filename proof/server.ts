// One app server process of the proof: a payment route on ONE framework (Express, Fastify, Hono or node:http),
// configured as docs/adapters/*.md show, on the store under test (reached through the fault proxy). The handler's
// effect is a row appended to the effect ledger, outside the system under test, before it answers: one row per
// execution, no uniqueness, so duplicates are counted rather than prevented. In transactional mode the effect is
// a row of the business table written through the claim's transaction (it commits with the key or not at all),
// pg's (`postgres-tx`), an ORM's (`postgres-kysely` …, proof/orm-stores.ts) or MariaDB's (`mysql-tx`,
// proof/mysql.ts), and the ledger row records the execution (attempts that rolled back included).
//
// Usage: node --import tsx proof/server.ts '<ServerConfig JSON>'. Prints {"ready":port} once listening; on stdin
// end it flushes its event log and exits.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { createInterface } from 'node:readline';
import { serve } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { Cluster, Redis } from 'ioredis';
import pg from 'pg';
import type { OncelyEvent } from '../src/core/events.js';
import type { Store } from '../src/core/store.js';
import { idempotency as expressIdempotency } from '../src/http/express.js';
import { idempotency as fastifyIdempotency } from '../src/http/fastify.js';
import { idempotency as honoIdempotency } from '../src/http/hono.js';
import { idempotency as nodeIdempotency } from '../src/http/node.js';
import { PostgresStore, transactionOf } from '../src/stores/postgres/index.js';
import { RedisStore } from '../src/stores/redis/index.js';
import { openOrmStore, type PaymentValues } from './orm-stores.js';
import { sentinelClient } from './sentinel.js';
import { isMySqlConnection, isOrm, type Route, type ServerConfig } from './types.js';

const config = JSON.parse(process.argv[2] ?? '{}') as ServerConfig;
const { pid } = process;

// The ledger: a direct connection (never through the proxy, never terminated by a fault).
const ledger = new pg.Pool({
  connectionString: config.ledger.url,
  application_name: config.ledger.applicationName,
  max: config.connections.ledger,
});
ledger.on('error', () => {});
const L = (table: string) => `"${config.ledger.schema}".${table}`;

// The store under test, with the client options the store pages recommend.
let store: Store;
let closeStore: () => Promise<void>;
/** Transactional mode: writes the payment row through the claim's transaction. Plain stores have none. */
let payThrough: ((context: Context, payment: PaymentValues) => Promise<void>) | undefined;
const s = config.store;
if (s.kind === 'redis') {
  const client = new Redis({
    host: '127.0.0.1',
    port: s.port,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
  });
  client.on('error', () => {});
  store = new RedisStore({ client, prefix: config.prefix });
  closeStore = async () => client.disconnect();
} else if (s.kind === 'cluster') {
  const natMap = Object.fromEntries(
    Object.entries(s.natMap).map(([announced, port]) => [announced, { host: '127.0.0.1', port }]),
  );
  const client = new Cluster(
    s.nodes.map((port) => ({ host: '127.0.0.1', port })),
    { enableOfflineQueue: false, redisOptions: { maxRetriesPerRequest: 0 }, natMap },
  );
  client.on('error', () => {});
  store = new RedisStore({ client, prefix: config.prefix });
  closeStore = async () => client.disconnect();
} else if (s.kind === 'sentinel') {
  // As docs/stores/redis.md recommends behind Sentinel; the data nodes through the proxies (natMap).
  const natMap = Object.fromEntries(
    Object.entries(s.natMap).map(([announced, port]) => [announced, { host: '127.0.0.1', port }]),
  );
  const client = sentinelClient(s.sentinelPort, natMap);
  // Counted by the checker: each time ioredis gave the connection up and sentinelClient connected it again.
  client.on('end', () => events.push(['ioredis', null, 'client-ended', '', Date.now()]));
  store = new RedisStore({ client, prefix: config.prefix, durable: s.durable });
  closeStore = async () => client.close();
} else if (isMySqlConnection(s)) {
  // Imported only when its kind runs, as the ORMs are: the other phases' servers never load mysql2 or the AWS SDK.
  const { openMySqlStore } = await import('./mysql.js');
  const mysql = openMySqlStore(s, {
    poolSize: config.connections.store,
    connectTimeoutMs: config.storeTimeoutMs,
  });
  store = mysql.store;
  const pay = mysql.pay;
  if (pay !== undefined) payThrough = (context, payment) => pay(context, payment);
  closeStore = mysql.close;
} else if (s.kind === 'dynamodb') {
  const { openDynamoStore } = await import('./dynamodb.js');
  const dynamo = openDynamoStore(s);
  store = dynamo.store;
  closeStore = dynamo.close;
} else if (isOrm(s.kind)) {
  const orm = await openOrmStore(s.kind, {
    url: s.url,
    schema: s.schema,
    applicationName: s.applicationName,
    connectTimeoutMs: config.storeTimeoutMs,
    poolSize: config.connections.store,
    payments: L('payments'),
  });
  store = orm.store;
  payThrough = (context, payment) => orm.pay(context, payment);
  closeStore = async () => {
    await orm.close().catch(() => {});
  };
} else {
  const pool = new pg.Pool({
    connectionString: s.url,
    application_name: s.applicationName,
    max: config.connections.store,
    connectionTimeoutMillis: config.storeTimeoutMs,
  });
  // A pooled client whose backend is terminated emits 'error'; without a listener the process would crash.
  pool.on('error', () => {});
  const plain = new PostgresStore({ pool, schema: s.schema });
  if (s.kind === 'postgres-tx') {
    store = plain.transactional();
    payThrough = async (context, p) => {
      await transactionOf(context).query(
        `INSERT INTO ${L('payments')} (key, id, token, pid, server, at_ms, backend, tx_started_ms)
         VALUES ($1, $2, $3, $4, $5, $6, pg_backend_pid(), (extract(epoch FROM now()) * 1000)::bigint)`,
        [p.key, p.id, p.token, p.pid, p.server, p.at],
      );
    };
  } else store = plain;
  closeStore = async () => {
    await plain.close().catch(() => {});
    await pool.end().catch(() => {});
  };
}

// Claim events, appended to the ledger in batches: which tokens were granted, completed, fenced, released, lost.
type Row = [string, number | null, string, string, number];
let events: Row[] = [];
function onEvent(event: OncelyEvent): void {
  const at = Date.now();
  switch (event.type) {
    case 'acquired':
    case 'takeover':
      events.push([event.key, event.token, event.type, String(event.attempt), at]);
      break;
    case 'completed':
    case 'leaseLost':
      events.push([event.key, event.token, event.type, '', at]);
      break;
    case 'released':
      events.push([event.key, event.token, event.type, event.reason, at]);
      break;
    case 'fenced':
      events.push([event.key, event.token, event.type, event.operation, at]);
      break;
    default:
  }
}
async function flushEvents(): Promise<void> {
  if (events.length === 0) return;
  const batch = events;
  events = [];
  const column = (index: number) => batch.map((row) => row[index]);
  await ledger
    .query(
      `INSERT INTO ${L('events')} (id, token, type, detail, at_ms, pid, server)
       SELECT e.*, $6::int, $7::text FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[]) AS e`,
      [column(0), column(1), column(2), column(3), column(4), pid, config.name],
    )
    .catch((error: unknown) => process.stderr.write(`[${config.name}] event flush failed: ${error}\n`));
}
const flusher = setInterval(() => void flushEvents(), 50);

interface Context {
  readonly key: string;
  readonly id: string;
  readonly token: number;
  readonly attempt: number;
  readonly takeover: boolean;
  readonly signal: AbortSignal;
  readonly transaction: unknown;
}
interface Answer {
  readonly status: number;
  readonly body: string;
}

/** Handlers between their effect and their answer: what a fault aims at ("mid-request"). */
const inflight = new Map<string, number>();

/** The business logic: the effect, recorded before the answer, then some work, then the payment as JSON. */
async function pay(
  context: Context | undefined,
  route: Route,
  clientKey: string | undefined,
): Promise<Answer> {
  const at = Date.now();
  if (context === undefined) {
    // Never expected (required: true, failOpen: false): an effect without a claim, counted by the checker.
    await ledger.query(
      `INSERT INTO ${L('executions')} (key, id, token, pid, server, adapter, route, at_ms) VALUES ($1, NULL, NULL, $2, $3, $4, $5, $6)`,
      [clientKey ?? '', pid, config.name, config.adapter, route, at],
    );
    return { status: 201, body: JSON.stringify({ key: clientKey, token: null, pid, payment: randomUUID() }) };
  }
  const { key, id, token, attempt, takeover, signal } = context;
  if (signal.aborted) return { status: 503, body: '{"error":"claim lost before the effect"}' };
  await ledger.query(
    `INSERT INTO ${L('executions')} (key, id, token, attempt, takeover, pid, server, adapter, route, at_ms)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [key, id, token, attempt, takeover, pid, config.name, config.adapter, route, at],
  );
  if (payThrough !== undefined) {
    try {
      await payThrough(context, { key, id, token, pid, server: config.name, at });
    } catch {
      // The transaction's connection is gone (a terminated backend): the app answers 503, which is not kept,
      // so the claim rolls back with the write and the client's retry runs again.
      return { status: 503, body: '{"error":"database unavailable"}' };
    }
  }
  inflight.set(id, token);
  try {
    const work = Math.floor(Math.random() * (config.handlerMs + 1));
    if (work > 0) await new Promise((resolve) => setTimeout(resolve, work));
  } finally {
    inflight.delete(id);
  }
  return {
    status: 201,
    body: JSON.stringify({ key, token, pid, server: config.name, payment: randomUUID() }),
  };
}

const base = {
  store,
  leaseMs: config.leaseMs,
  storeTimeoutMs: config.storeTimeoutMs,
  onEvent,
};
const routeOptions: Record<Route, typeof base & { waitMs?: number }> = {
  '/pay': base,
  '/pay-wait': { ...base, waitMs: config.waitMs },
};
const headerKey = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

let server: Server;
if (config.adapter === 'express') {
  const app = express();
  app.use(express.json());
  for (const route of ['/pay', '/pay-wait'] as const) {
    app.post(route, expressIdempotency(routeOptions[route]), async (req, res) => {
      const answer = await pay(
        res.locals.idempotency as Context | undefined,
        route,
        headerKey(req.headers['idempotency-key']),
      );
      res.status(answer.status).type('application/json').send(answer.body);
    });
  }
  server = createServer(app);
} else if (config.adapter === 'fastify') {
  const app = Fastify();
  await app.register(fastifyIdempotency, base);
  for (const [route, idempotency] of [
    ['/pay', true],
    ['/pay-wait', { waitMs: config.waitMs }],
  ] as const) {
    app.post(route, { config: { idempotency } }, async (request, reply) => {
      const answer = await pay(
        (request.idempotency ?? undefined) as Context | undefined,
        route,
        headerKey(request.headers['idempotency-key']),
      );
      return reply.code(answer.status).type('application/json').send(answer.body);
    });
  }
  await app.listen({ port: config.port, host: '127.0.0.1' });
  server = app.server;
} else if (config.adapter === 'hono') {
  const app = new Hono();
  for (const route of ['/pay', '/pay-wait'] as const) {
    app.post(route, honoIdempotency(routeOptions[route]), async (c) => {
      const answer = await pay(
        c.var.idempotency as Context | undefined,
        route,
        c.req.header('idempotency-key'),
      );
      return c.body(answer.body, answer.status as 201, { 'content-type': 'application/json' });
    });
  }
  server = serve({ fetch: app.fetch, port: config.port, hostname: '127.0.0.1' }) as Server;
  await new Promise((resolve) => server.once('listening', resolve));
} else {
  const listeners = new Map(
    (['/pay', '/pay-wait'] as const).map((route) => [
      route as string,
      nodeIdempotency(routeOptions[route])(async (req, res, { idempotency }) => {
        const answer = await pay(
          idempotency as Context | undefined,
          route,
          headerKey(req.headers['idempotency-key']),
        );
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
      }),
    ]),
  );
  server = createServer((req, res) => {
    const listener = listeners.get(req.url ?? '/');
    if (listener === undefined) return void res.writeHead(404).end();
    listener(req, res);
  });
}
if (!server.listening) {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, '127.0.0.1', () => resolve());
  });
}
process.stdout.write(`${JSON.stringify({ ready: config.port, pid })}\n`);

async function shutdown(): Promise<void> {
  clearInterval(flusher);
  server.closeAllConnections?.();
  await new Promise((resolve) => server.close(resolve));
  await flushEvents();
  await closeStore();
  await ledger.end().catch(() => {});
  process.exit(0);
}
// The harness asks `status` on stdin before it aims a fault at this process.
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'status') process.stdout.write(`${JSON.stringify({ claims: [...inflight] })}\n`);
});
process.stdin.on('end', () => void shutdown());
