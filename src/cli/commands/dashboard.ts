/**
 * @module `oncely dashboard`: serves the dashboard page for a Redis, PostgreSQL, MySQL or DynamoDB store (and a
 * PostgreSQL outbox) from the command line.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import type { DashboardStoreSource } from '../../dashboard/board-source.js';
import { MIN_TOKEN_LENGTH } from '../../dashboard/options.js';
import type { DashboardSource } from '../../dashboard/source.js';
import { intOption, parseOptions } from '../args.js';
import { type DashboardServer, isLoopback, startDashboardServer } from '../dashboard-server.js';
import { UsageError } from '../errors.js';
import { checkLocation, type OpenedStore, openStore } from '../open-store.js';
import { keysTable, requireTable } from '../postgres-location.js';
import { openPool } from '../postgres-pool.js';
import { openRedisClient } from '../redis-client.js';
import { recordStore } from './inspect.js';

export const dashboardHelp = `oncely dashboard --store redis|postgres|mysql|dynamodb [--port 8080] [--host 127.0.0.1] [--actions]
                 [--prefix oncely | --schema public --table oncely_keys | --table oncely_keys] [--outbox]

  Serves one page on http://127.0.0.1:8080/: keys by state, a key looked up by scope and key, recent engine
  events and outcome rates (from an EventLog, see docs/dashboard.md), outbox backlog, lag and dead letters, and
  parked inbox messages, refreshed every 2 s. Read-only unless --actions (replay or discard a dead letter,
  release or delete a key), which need the token: ONCELY_DASHBOARD_TOKEN, or one made up and printed in the
  link. A --host beyond loopback needs ONCELY_DASHBOARD_TOKEN, and then every read needs it too. With --store
  postgres the outbox of DATABASE_URL (in --schema) is shown; with --store redis, --outbox adds it. --store mysql
  (MYSQL_URL) and --store dynamodb (the AWS SDK's environment) show the keys, lookup and parked panels through the
  store's inspector, with no event log; the outbox panel reads PostgreSQL's outbox only, so MySQL's is not shown
  (oncely/outbox's outboxStats and listDeadLetters read it).`;

/** Why `--outbox` (the PostgreSQL outbox of DATABASE_URL beside Redis records) is refused with another store. */
const OUTBOX_ELSEWHERE = {
  postgres: '--outbox goes with --store redis (on PostgreSQL the outbox is always shown)',
  // Its panel reads the outbox with PostgreSQL's SQL (a pg pool); the MySQL outbox's functions take a MySQL pool.
  mysql:
    "--outbox goes with --store redis (the outbox of DATABASE_URL); the outbox panel reads PostgreSQL's outbox only, so MySQL's is not shown",
  dynamodb: '--outbox goes with --store redis (the outbox of DATABASE_URL)',
} as const;

export async function dashboardCommand(argv: readonly string[]): Promise<void> {
  const { values } = parseOptions('dashboard', argv, {
    store: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    actions: { type: 'boolean' },
    prefix: { type: 'string' },
    schema: { type: 'string' },
    table: { type: 'string' },
    outbox: { type: 'boolean' },
  });
  // Every flag and the token are checked before anything is dialled.
  const kind = recordStore('dashboard', values.store);
  const port = intOption('port', values.port, 8080, 0, 65_535);
  const host = values.host ?? '127.0.0.1';
  if (host === '') throw new UsageError('dashboard: --host must not be empty');
  checkLocation(kind, values);
  if (kind !== 'redis' && values.outbox) throw new UsageError(`dashboard: ${OUTBOX_ELSEWHERE[kind]}`);
  const token = tokenFor(host, values.actions === true);
  const location = kind === 'postgres' ? keysTable(values) : undefined;

  const opened: { redis?: Redis; pool?: Pool; store?: OpenedStore } = {};
  const closeAll = async () => {
    opened.redis?.disconnect();
    await opened.pool?.end();
    await opened.store?.close();
  };
  let server: DashboardServer;
  try {
    let source: DashboardSource | DashboardStoreSource;
    let description: string;
    if (kind === 'redis') {
      const { client, url } = await openRedisClient();
      opened.redis = client;
      source = values.prefix === undefined ? { redis: client } : { redis: client, prefix: values.prefix };
      description = `redis ${url}`;
      if (values.outbox) opened.pool = (await openPool()).pool;
    } else if (kind === 'postgres') {
      const { pool, url } = await openPool();
      opened.pool = pool;
      await requireTable(pool, location!.qualified, url, location!.flags);
      source = { postgres: pool, schema: location!.schema, table: location!.table };
      description = `postgres ${url}`;
    } else {
      // Any store with an inspector: the dashboard reads its records through it, as inspect does.
      opened.store = await openStore(kind, { table: values.table });
      source = { store: opened.store.store };
      description = opened.store.description;
    }
    server = await startDashboardServer({
      source,
      ...(kind === 'redis' ? { outbox: opened.pool ? { pool: opened.pool } : false } : {}),
      host,
      port,
      token,
      actions: values.actions === true,
    });
    process.stdout.write(banner(server.url, description, values.actions === true, !isLoopback(host)));
  } catch (error) {
    await closeAll();
    throw error;
  }
  const stop = async () => {
    await server.close();
    await closeAll();
    process.exit(0);
  };
  process.once('SIGINT', stop).once('SIGTERM', stop);
  return new Promise(() => {});
}

/**
 * The token: ONCELY_DASHBOARD_TOKEN when set (an environment variable, not a flag, so it stays out of `ps`).
 * Beyond loopback it is required; for actions on loopback one is made up when none is set.
 */
function tokenFor(host: string, actions: boolean): string | undefined {
  const given = process.env.ONCELY_DASHBOARD_TOKEN;
  if (given !== undefined && given !== '') {
    if (given.length < MIN_TOKEN_LENGTH)
      throw new UsageError(
        `dashboard: ONCELY_DASHBOARD_TOKEN must be at least ${MIN_TOKEN_LENGTH} characters`,
      );
    return given;
  }
  if (!isLoopback(host)) {
    throw new UsageError(
      `dashboard: --host ${host} is reachable beyond this machine, so the dashboard needs a token: set ONCELY_DASHBOARD_TOKEN (at least ${MIN_TOKEN_LENGTH} characters)`,
    );
  }
  return actions ? randomBytes(24).toString('base64url') : undefined;
}

function banner(url: string, store: string, actions: boolean, remote: boolean): string {
  const notes = [
    actions
      ? 'Actions are on (replay, discard, release, delete): the link carries the token; keep it to yourself.'
      : 'Read-only: --actions turns on replay, discard, release and delete (each needs the token).',
    remote ? 'Listening beyond loopback: every read needs the token too.' : undefined,
  ].filter(Boolean);
  return `oncely dashboard on ${url} (store: ${store}); Ctrl-C stops it.\n${notes.join('\n')}\n`;
}
