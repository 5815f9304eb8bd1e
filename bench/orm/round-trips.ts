/**
 * @module Round trips of the ORM benchmark, counted on the client: every message a path sends and then waits on.
 * On `pg` (raw pg, Kysely, Drizzle, Knex, TypeORM, MikroORM, Prisma's adapter) each `Client#query` call is one
 * message answered before the next (pg queues a connection's queries; several statements joined in one text are
 * one message), so `pg.Client.prototype.query` is wrapped, in every copy of pg installed (MikroORM brings its own).
 * postgres.js reports each query it builds to its `debug` option, and a path's queries run one after another.
 */
import { createRequire } from 'node:module';
import pg from 'pg';
import { SCHEMA_PREFIX } from './fixtures.js';

export interface MessageLog {
  /** Messages sent while the log was on. */
  count: number;
  /** The first messages' texts, one line each, shortened: what one request sends, for people. */
  readonly texts: string[];
}

const KEPT_TEXTS = 12;
const SCHEMA_NAME = new RegExp(`${SCHEMA_PREFIX}[0-9a-f]+`, 'g');
const SHOWN_CHARS = 70;
let active: MessageLog | undefined;

function record(text: string): void {
  if (active === undefined) return;
  active.count += 1;
  if (active.texts.length < KEPT_TEXTS) {
    // The run's random schema name shown as `bench`, so the listing reads the same from run to run.
    const line = text.replace(/\s+/g, ' ').replace(SCHEMA_NAME, 'bench').trim();
    active.texts.push(line.length > SHOWN_CHARS ? `${line.slice(0, SHOWN_CHARS - 1)}…` : line);
  }
}

/** Runs `work` with every message counted into `log` (one log at a time: the paths are counted one by one). */
export async function countedInto<T>(log: MessageLog, work: () => Promise<T>): Promise<T> {
  active = log;
  try {
    return await work();
  } finally {
    active = undefined;
  }
}

/** The `debug` option for postgres.js: called once per query it builds, before sending it. */
export function postgresJsDebug(_connection: number, text: string): void {
  record(text);
}

/** The Client classes of every pg copy the paths load: the project's, and the one @mikro-orm/postgresql requires. */
function pgClients(): (typeof pg.Client)[] {
  const require = createRequire(import.meta.url);
  const mikroRequire = createRequire(require.resolve('@mikro-orm/postgresql'));
  const mikroPg = mikroRequire('pg') as typeof pg;
  return [...new Set([pg.Client, mikroPg.Client])];
}

/**
 * Wraps `query` of every pg Client class to record each call (only while a log is on); returns the undo. Installed
 * for the counting only, so the timed rounds run pg's own method.
 */
export function countPgQueries(): () => void {
  const undo = pgClients().map((Client) => {
    const original = Client.prototype.query;
    Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const config = args[0];
      record(typeof config === 'string' ? config : String((config as { text?: unknown }).text ?? ''));
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    return () => {
      Client.prototype.query = original;
    };
  });
  return () => {
    for (const restore of undo) restore();
  };
}
