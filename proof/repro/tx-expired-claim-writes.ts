// Reproduction of a violation the HTTP proof found in PostgreSQL transactional mode: two committed effects for
// one key.
//
// A transactional claim rolls back at its deadline (`sentAt + leaseMs`, src/core/transaction-claim.ts #expire)
// and its connection goes back to the pool (src/stores/postgres/transaction-run.ts `rollback` → `giveBack` →
// `release(false)`), but the handler still holds that connection as `context.transaction`. Its next statement
// runs outside any transaction and autocommits — or inside another request's transaction, if the pool has handed
// the connection out again. The effect commits without the key; the key is free; the retry commits it again.
//
// The deadline counts from when `begin` was SENT, and a transactional begin waits for a pooled connection and on
// row locks (not bounded by storeTimeoutMs), so under load or after a network stall a claim can be handed out
// with its deadline already past: in the proof the handler's write came 1–600 ms after a `leaseLost` event.
// Here a handler simply outlives a short lease.
//
// Usage: node --import tsx proof/repro/tx-expired-claim-writes.ts   (exit 1 while the violation exists)
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import pg from 'pg';
import { idempotency } from '../../src/http/express.js';
import { PostgresStore, transactionOf } from '../../src/stores/postgres/index.js';
import { services } from '../../test/support/services.js';

const schema = `oncely_repro_${randomBytes(3).toString('hex')}`;
const pool = new pg.Pool({ connectionString: services.postgres.url, max: 4 });
pool.on('error', () => {});
const admin = new pg.Pool({ connectionString: services.postgres.url, max: 1 });
const store = new PostgresStore({ pool, schema });
await store.migrate();
await admin.query(`CREATE TABLE "${schema}".payments (key text, token bigint)`);

let slow = true;
const app = express();
app.use(express.json());
app.post('/payments', idempotency({ store: store.transactional(), leaseMs: 200 }), async (_req, res) => {
  const context = res.locals.idempotency!;
  if (slow) {
    slow = false;
    await new Promise((resolve) => setTimeout(resolve, 400)); // past the 200 ms lease
  }
  const tx = transactionOf(context);
  await tx.query(`INSERT INTO "${schema}".payments VALUES ($1, $2)`, [context.key, context.token]);
  res.status(201).json({ paid: context.token });
});
const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const { port } = server.address() as AddressInfo;
const pay = async () => {
  const response = await fetch(`http://127.0.0.1:${port}/payments`, {
    method: 'POST',
    headers: { 'idempotency-key': 'order-1', 'content-type': 'application/json' },
    body: '{"amount":100}',
  });
  return `${response.status} ${await response.text()}`;
};
const payments = async () =>
  (await admin.query(`SELECT token FROM "${schema}".payments ORDER BY token`)).rows;
let failed = false;
try {
  const first = await pay();
  process.stdout.write(
    `first answer: ${first.slice(0, 120)}\ncommitted payments: ${JSON.stringify(await payments())}\n`,
  );
  const second = await pay();
  const rows = await payments();
  process.stdout.write(`retry answer: ${second}\ncommitted payments: ${JSON.stringify(rows)}\n`);
  failed = rows.length > 1;
  process.stdout.write(
    failed
      ? `VIOLATION: ${rows.length} committed effects for one key (the first written after its claim rolled back, outside the claim's transaction)\n`
      : 'OK: one committed effect\n',
  );
} finally {
  server.close();
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await Promise.all([pool.end(), admin.end()]);
}
process.exit(failed ? 1 : 0);
