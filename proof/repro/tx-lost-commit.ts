// Reproduction of a violation the HTTP proof found in PostgreSQL transactional mode: a client receives the
// handler's 2xx although neither the effect nor the outcome committed, and a retry runs the handler again (a
// second 2xx with another body).
//
// The handler writes its effect through the claim's transaction; the transaction's backend is then terminated
// (what `pg_terminate_backend`, a failover or a dropped connection does) before the engine stores the outcome.
// The outcome UPDATE fails, the transaction is gone (rolled back by the server), and `TransactionClaim#complete`
// rejects with StoreUnavailableError. `Running#respond` (src/http/running.ts) then sends the handler's original
// response — right on a plain store, where the effect happened and cannot be undone, wrong in transactional mode,
// where the effect rolled back with the claim: the client is told "paid" for a payment that does not exist, and
// never retries. docs/http.md ("the client still gets the handler's response: it is the truth of what ran") and
// docs/stores/postgres.md ("COMMIT fails → StoreUnavailableError … a retry is safe") disagree here.
//
// Usage: node --import tsx proof/repro/tx-lost-commit.ts   (exit 1 while the violation exists)
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

let terminateNext = true;
const app = express();
app.use(express.json());
app.post('/payments', idempotency({ store: store.transactional() }), async (_req, res) => {
  const context = res.locals.idempotency!;
  const tx = transactionOf(context);
  await tx.query(`INSERT INTO "${schema}".payments VALUES ($1, $2)`, [context.key, context.token]);
  if (terminateNext) {
    terminateNext = false;
    // The connection dies after the effect, before the outcome is stored.
    const { rows } = await tx.query('SELECT pg_backend_pid() AS pid');
    await admin.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
    for (let i = 0; i < 100; i++) {
      const gone = await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [rows[0].pid]);
      if (gone.rowCount === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
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
let failed = false;
try {
  const first = await pay();
  const rows = (await admin.query(`SELECT count(*)::int AS n FROM "${schema}".payments`)).rows[0].n as number;
  const second = await pay();
  const after = (await admin.query(`SELECT count(*)::int AS n FROM "${schema}".payments`)).rows[0]
    .n as number;
  process.stdout.write(`first answer:  ${first}\npayments committed after it: ${rows}\n`);
  process.stdout.write(`retry answer:  ${second}\npayments committed after it: ${after}\n`);
  failed = first.startsWith('2') && rows === 0;
  process.stdout.write(
    failed
      ? 'VIOLATION: a 2xx was sent for an effect that did not commit; the retry ran the handler again\n'
      : 'OK: no 2xx without a committed effect\n',
  );
} finally {
  server.close();
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await Promise.all([pool.end(), admin.end()]);
}
process.exit(failed ? 1 : 0);
