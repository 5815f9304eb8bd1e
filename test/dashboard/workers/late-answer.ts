/**
 * Test worker (dashboard): the late-answer application in a process of its own, with Node's default handling of
 * unhandled rejections (none installed here), so the parent test sees whether a late answer kills the process.
 * Prints {"type":"listening","port":N} once it serves.
 */
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { lateAnswerApp } from '../support/late-app.js';

const { url, schema } = JSON.parse(process.env.ONCELY_WORKER ?? '{}') as { url: string; schema: string };
const pool = new pg.Pool({ connectionString: url, max: 2 });
pool.on('error', () => {});
const server = lateAnswerApp(pool, schema).listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ type: 'listening', port })}\n`);
});
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => void pool.end().then(() => process.exit(0)));
});
