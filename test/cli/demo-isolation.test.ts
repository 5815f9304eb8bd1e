// `oncely demo --store postgres` pointed at an application's database: it keeps to its own schema, and the
// application's outbox events, keys and tables are left exactly as they were. A database of the test's own, so no
// other test file's relay or demo can touch the rows this test counts.
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { migrate as migrateOutbox, Outbox } from '../../src/messaging/outbox/index.js';
import { migrate as migrateKeys } from '../../src/stores/postgres/migrate.js';
import { requireService, services } from '../support/services.js';
import { oncely, serveDemo } from './support/cli.js';

const database = `oncely_app_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
const appUrl = (() => {
  const url = new URL(services.postgres.url);
  url.pathname = `/${database}`;
  return url.href;
})();
let admin: pg.Pool;
let app: pg.Pool;

beforeAll(async () => {
  await requireService('postgres');
  admin = new pg.Pool({ connectionString: services.postgres.url, max: 1 });
  await admin.query(`CREATE DATABASE "${database}"`);
  app = new pg.Pool({ connectionString: appUrl, max: 2 });
  app.on('error', () => {});
  // The application: oncely migrated in public, with events waiting for its own relay (stopped right now).
  await migrateKeys(app);
  await migrateOutbox(app);
});

beforeEach(async () => {
  await app.query('DELETE FROM public.oncely_outbox');
  await new Outbox().addMany(app, [
    { topic: 'order.created', key: 'order-1', payload: { order: 1 } },
    { topic: 'payment.created', key: 'pay_app', payload: { theirs: true } },
    { topic: 'order.created', payload: { order: 2 } },
  ]);
});

afterAll(async () => {
  await app?.end();
  await admin?.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  await admin?.end();
});

const appRows = async () =>
  (
    await app.query(
      `SELECT id, seq, topic, key, payload, content_type, headers, state, attempts, lease_until, leased_by
       FROM public.oncely_outbox ORDER BY id`,
    )
  ).rows;

const publicTables = async () =>
  (
    await app.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
    )
  ).rows.map((row) => row.name);

describe('the demo keeps to its own schema', () => {
  it('demo --serve --store postgres publishes its own events and leaves the application’s outbox untouched', async () => {
    const before = await appRows();
    expect(before).toHaveLength(3);
    const tablesBefore = await publicTables();
    const demo = await serveDemo(['--store', 'postgres'], { DATABASE_URL: appUrl });
    let published: string[];
    try {
      const answer = await fetch(`${demo.url}/payments`, {
        method: 'POST',
        headers: { 'idempotency-key': 'order-42', 'content-type': 'application/json' },
        body: '{"amount": 1999, "currency": "EUR"}',
      });
      expect(answer.status).toBe(201);
      const payment = (await answer.json()) as { id: string };
      // The relay prints what it publishes; once the demo's own event is out, it has claimed (at least) every row
      // that sorts before it, which is where the application's rows would be if the relay could see them.
      published = await demo.published((lines) => lines.some((line) => line.includes(payment.id)));
    } finally {
      await demo.stop();
    }
    expect(published.filter((line) => !line.includes('"id":"pay_'))).toEqual([]);
    expect(published.join('\n')).not.toMatch(/theirs|order/);
    expect(await appRows()).toEqual(before);
    // Nothing of the demo's in the application's schema: its keys, outbox and payments live in oncely_demo.
    expect(await publicTables()).toEqual(tablesBefore);
    const demoTables = await app.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'oncely_demo' ORDER BY 1",
    );
    expect(demoTables.rows.map((row) => row.name)).toEqual(
      expect.arrayContaining(['demo_payments', 'oncely_keys', 'oncely_outbox']),
    );
  });

  it('the storm demo on PostgreSQL leaves the application’s outbox untouched too', async () => {
    const before = await appRows();
    expect(before).toHaveLength(3);
    const result = await oncely(
      ['demo', '--store', 'postgres', '--keys', '2', '--duplicates', '3', '--processing-ms', '5'],
      { DATABASE_URL: appUrl },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/published one payment.created event for each of the 2 payments/);
    expect(await appRows()).toEqual(before);
  });
});
