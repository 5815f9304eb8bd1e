/**
 * @module Taking a client from the caller's pool without a window in which an 'error' event could crash the process:
 * the one way every part of the store checks a connection out.
 */
import type { Pool, PoolClient } from 'pg';

/**
 * Checks a client out of the pool with `onError` attached before anything else can happen on it. pg-pool removes
 * its own 'error' listener when it hands a client out, and a new connection is handed out from inside pg's
 * protocol parser: if the same socket read also holds a FATAL (the backend was terminated just then), the parser
 * emits 'error' right after the hand-over. `await pool.connect()` resumes a microtask too late for that, and an
 * 'error' event with no listener crashes the process; the callback form runs in the hand-over itself.
 */
export function checkout(pool: Pool, onError: (error: Error) => void): Promise<PoolClient> {
  return new Promise((resolve, reject) => {
    pool.connect((error, client) => {
      if (error !== undefined && error !== null) return reject(error);
      if (client === undefined) return reject(new Error('the pool handed out no client'));
      client.on('error', onError);
      resolve(client);
    });
  });
}
