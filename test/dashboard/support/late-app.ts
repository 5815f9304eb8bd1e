/**
 * Test support (dashboard): an Express application whose request-timeout middleware answers first when the
 * dashboard is slow, as many production apps have. Used in-process and by workers/late-answer.ts.
 */
import express from 'express';
import type pg from 'pg';
import { dashboard } from '../../../src/dashboard/index.js';

/** Answers 503 after `ms` unless the route answered first: the dashboard's answer then comes too late. */
export function requestTimeout(ms: number): express.RequestHandler {
  return function requestTimeout(_req, res, next) {
    const timer = setTimeout(() => {
      if (!res.headersSent) res.status(503).type('text').send('timed out');
    }, ms);
    res.once('close', () => clearTimeout(timer));
    next();
  };
}

export function lateAnswerApp(pool: pg.Pool, schema: string): express.Express {
  // A long refresh: every snapshot request of the test shares the one build the lock holds up.
  const board = dashboard({
    source: { postgres: pool, schema },
    outbox: false,
    basePath: '/ops/oncely',
    refreshMs: 600_000,
  });
  const app = express();
  app.use(requestTimeout(100));
  app.get('/health', (_req, res) => {
    res.type('text').send('ok');
  });
  app.use('/ops/oncely', board.node);
  return app;
}

/** The keys table locked by a transaction of its own: every dashboard read of it waits until `release`. */
export async function lockKeys(pool: pg.Pool, schema: string): Promise<{ release: () => Promise<void> }> {
  const client = await pool.connect();
  await client.query('BEGIN');
  await client.query(`LOCK TABLE "${schema}".oncely_keys IN ACCESS EXCLUSIVE MODE`);
  return {
    release: async () => {
      await client.query('COMMIT');
      client.release();
    },
  };
}

/** How many statements on `schema` wait for a lock right now (the dashboard's reads held up by `lockKeys`). */
export async function waitingReads(pool: pg.Pool, schema: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE wait_event_type = 'Lock' AND state = 'active' AND position($1 in query) > 0`,
    [`"${schema}"`],
  );
  return rows[0]?.n ?? 0;
}
