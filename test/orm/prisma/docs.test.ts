/**
 * @module The code blocks of docs/orm/prisma.md, run as a reader runs them. The docs test type-checks them (each
 * imports `./generated/prisma/client.js`, which the global setup generates beside the docs test's virtual files) but
 * cannot run them from its own directory; here each block is written beside that generated client and run by the
 * docs' own runner (test/docs/run-snippet.ts: to its end, and an HTTP server it starts must replay a retried
 * POST /payments), in a database of its own with what the page says the reader has: `oncely migrate --schema
 * oncely` done and the `Payment` model's table.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate as migrateOutbox } from '../../../src/messaging/outbox/index.js';
import { migrate } from '../../../src/stores/postgres/index.js';
import { parseMarkdown, repoRoot, type Snippet } from '../../docs/markdown.js';
import { requireService, services } from '../../support/services.js';

const page = 'docs/orm/prisma.md';
const { snippets } = parseMarkdown(page, readFileSync(join(repoRoot, page), 'utf8'));
// Beside test/docs/.virtual/generated/prisma, as the docs test compiles them.
const blockDir = join(repoRoot, 'test/docs/.virtual');
const database = `oncely_docs_prisma_${randomBytes(4).toString('hex')}`;
const admin = new pg.Pool({ connectionString: services.postgres.url, max: 1 });
const written: string[] = [];
let databaseUrl: string;

beforeAll(async () => {
  await requireService('postgres');
  await admin.query(`CREATE DATABASE ${database}`);
  const url = new URL(services.postgres.url);
  url.pathname = `/${database}`;
  databaseUrl = url.href;
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    // The reader's model (`prisma migrate` made it) and oncely's tables in their own schema.
    await pool.query('CREATE TABLE orm_payments (id text PRIMARY KEY, cents integer NOT NULL)');
    await migrate(pool, { schema: 'oncely' });
    await migrateOutbox(pool, { schema: 'oncely' });
  } finally {
    await pool.end();
  }
});
afterAll(async () => {
  for (const file of written) rmSync(file, { force: true });
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
});

function run(snippet: Snippet): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const file = join(blockDir, `prisma-docs-${database}-L${snippet.line}.ts`);
  writeFileSync(file, snippet.code);
  written.push(file);
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(repoRoot, 'test/docs/run-snippet.ts'), file],
      {
        cwd: repoRoot,
        env: { ...process.env, DATABASE_URL: databaseUrl },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe(`${page}: every block runs`, () => {
  it('has its blocks', () => {
    expect(snippets.length).toBeGreaterThanOrEqual(6);
  });

  for (const snippet of snippets) {
    it(`${page}:${snippet.line}`, async () => {
      const result = await run(snippet);
      if (result.code !== 0) throw new Error(`exited ${result.code}:\n${result.stderr}${result.stdout}`);
      expect(result.stdout).toContain('ran to the end');
      // What the blocks' comments promise.
      if (snippet.code.includes('replayed: false')) {
        expect(result.stdout).toMatch(/paid: 1999 \}, replayed: false/);
        expect(result.stdout).toMatch(/replayed: true/);
      }
      if (snippet.code.includes('// processed')) expect(result.stdout).toMatch(/processed\nduplicate/);
    }, 60_000);
  }

  it('the blocks left what they say: one payment per key, the joined one committed, the event beside its payment', async () => {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
    try {
      const ids = (await pool.query('SELECT id FROM orm_payments')).rows.map((row: { id: string }) => row.id);
      for (const prefix of ['pay-', 'joined-', 'outbox-', 'msg-'])
        expect(
          ids.filter((id: string) => id.startsWith(prefix)),
          prefix,
        ).toHaveLength(1);
      const events = await pool.query(
        "SELECT key FROM oncely.oncely_outbox WHERE topic = 'payment.created' AND key LIKE 'outbox-%'",
      );
      expect(events.rows).toHaveLength(1);
    } finally {
      await pool.end();
    }
  });
});
