import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { inspect } from '../../src/cli/commands/inspect.js';
import { migrate } from '../../src/cli/commands/migrate.js';
import { purge } from '../../src/cli/commands/purge.js';
import { stats } from '../../src/cli/commands/stats.js';
import { MySqlStore } from '../../src/stores/mysql/index.js';
import {
  command,
  expectCleanFailure,
  oncely as run,
  type ServingCli,
  serveCli,
  sourceCli,
} from '../cli/support/cli.js';
import { completePayment, expectDashboardShowsPayment, PAYMENT } from '../cli/support/payment-record.js';
import { requireService, services } from '../support/services.js';
import { createPool, dropTable, query, uniqueTable } from './support.js';

// The CLI from its sources (`npm run build` is the lead's): main.ts as the package's bin runs it for exit codes
// and messages, the commands in this process where only their work is checked (each spawn costs seconds).
const oncely = (args: readonly string[], env: Record<string, string> = {}) =>
  run(args, { MYSQL_URL: services.mariadb.url, ...env }, 30_000, sourceCli);

describe('oncely CLI with --store mysql', () => {
  const table = uniqueTable('cli');
  const pool = createPool('mysql2', { size: 2 });
  beforeAll(() => requireService('mariadb'));
  afterAll(async () => {
    await dropTable(pool, table);
    await pool.end();
  });

  it('migrate --print writes the DDL without connecting', async () => {
    vi.stubEnv('MYSQL_URL', 'mysql://nobody@127.0.0.1:1/none');
    try {
      const printed = await command(migrate, ['--store', 'mysql', '--table', 'app_keys', '--print']);
      expect(printed).toContain('CREATE TABLE IF NOT EXISTS `app_keys`');
      expect(printed).toContain('CREATE PROCEDURE IF NOT EXISTS `app_keys_begin_v1`');
      expect(printed).toContain('-- oncely: transactional outbox');
      expect(printed).toMatch(/CREATE TABLE IF NOT EXISTS `?oncely_outbox`? /);
      expect(printed).toMatch(/CREATE TABLE IF NOT EXISTS `?oncely_outbox_keys`? /);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('inspect, stats and purge fail on a table not migrated yet, naming the command that creates it', async () => {
    const result = await oncely(['stats', '--store', 'mysql', '--table', table]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(
        `^oncely: there is no table ${table} in .*; run: oncely migrate --store mysql --table ${table}\\n$`,
      ),
    );
  });

  it('migrate creates the table; stats, inspect and purge then read and maintain its records', async () => {
    const migrated = await command(migrate, ['--store', 'mysql', '--table', table]);
    expect(migrated).toMatch(
      new RegExp(
        `^migrated mysql://root@127.0.0.1:3306/test: ${table} and its procedures, oncely_outbox and oncely_outbox_keys\\n$`,
      ),
    );

    // The transactional outbox's tables came with it, for `outbox.add(connectionOf(context), event)`.
    const outboxTables = await query(
      pool,
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN ('oncely_outbox', 'oncely_outbox_keys') ORDER BY table_name",
    );
    expect(outboxTables.map((row) => row.name)).toEqual(['oncely_outbox', 'oncely_outbox_keys']);

    await completePayment(new MySqlStore({ pool, table }));

    const counted = await command(stats, ['--store', 'mysql', '--table', table]);
    expect(counted).toMatch(/mysql mysql:\/\/root@127\.0\.0\.1:3306\/test\s*│?\s*1\s/);

    const inspected = await command(inspect, [
      '--store',
      'mysql',
      '--table',
      table,
      '--key',
      PAYMENT.key,
      '--scope',
      PAYMENT.scope,
    ]);
    expect(inspected).toContain('POST /payments');
    expect(inspected).toContain('pay_cli');

    expect(await command(purge, ['--store', 'mysql', '--table', table])).toMatch(
      /^removed 0 expired records in/,
    );
  });

  it('dashboard --store mysql serves the page and its JSON from the table, with no outbox panel', async () => {
    expectCleanFailure(
      await oncely(['dashboard', '--store', 'mysql', '--table', table, '--outbox']),
      2,
      /--outbox goes with --store redis .*the outbox panel reads PostgreSQL's outbox only, so MySQL's is not shown/,
    );
    let serving: ServingCli | undefined;
    try {
      serving = await serveCli(
        ['dashboard', '--store', 'mysql', '--table', table, '--port', '0'],
        { MYSQL_URL: services.mariadb.url },
        sourceCli,
      );
      // The record the previous test completed, read through the store's inspector.
      await expectDashboardShowsPayment(serving.url, 'mysql');
    } finally {
      await serving?.stop();
    }
  });

  it('refuses flags of other stores, a bad table name and a URL of another scheme as usage errors', async () => {
    const schema = await oncely(['migrate', '--store', 'mysql', '--schema', 'app']);
    expect(schema.code).toBe(2);
    expect(schema.stderr).toMatch(/--schema goes with PostgreSQL/);
    await expect(command(stats, ['--store', 'mysql', '--prefix', 'x'])).rejects.toThrow(
      /--prefix goes with --store redis/,
    );
    await expect(
      command(migrate, ['--store', 'mysql', '--table', 'x'.repeat(65), '--print']),
    ).rejects.toThrow(/--table "x+" is not valid/);
    vi.stubEnv('MYSQL_URL', 'postgres://x@y/z');
    try {
      await expect(command(stats, ['--store', 'mysql'])).rejects.toThrow(
        /MYSQL_URL has the scheme "postgres:"/,
      );
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
