import type { Pool } from 'pg';
import { UsageError } from './errors.js';

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** A pool for commands that talk to PostgreSQL directly (migrate, outbox): DATABASE_URL, localhost by default. */
export async function openPool(): Promise<{ pool: Pool; url: string }> {
  const url = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  let pg: typeof import('pg');
  try {
    pg = await import('pg');
  } catch {
    throw new UsageError('this command needs the "pg" package: npm install pg');
  }
  const pool = new pg.default.Pool({ connectionString: url, max: 4 });
  try {
    await pool.query('select 1');
  } catch (error) {
    await pool.end();
    throw new UsageError(
      `cannot reach PostgreSQL at ${redact(url)} (${(error as Error).message}); set DATABASE_URL`,
    );
  }
  return { pool, url: redact(url) };
}

export const redact = (url: string) => url.replace(/:[^:@/]*@/, ':***@');
