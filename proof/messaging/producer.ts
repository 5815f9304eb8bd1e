// The producer process of the messaging proof: concurrent business transactions, each writing 1..n events of
// different keys through `Outbox#addMany`, as docs/messaging/outbox.md shows. In each transaction the key's
// business row (accounts) is updated first, in key order, and its new version goes into the event: a key's
// versions are its commit order. The `produced` row of each event is written in the same transaction, so it
// exists exactly when the event committed. A share of the transactions rolls back (their events must never
// arrive).
//
// It commits events as the orchestrator gives it credit (IPC `{ credit }`: the total it may have committed),
// which keeps the backlog bounded so every stage (outbox, relays, broker, consumers) is busy when a fault hits.
// Reports `{ committed, rolledBack }` by IPC.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Outbox } from '../../src/messaging/outbox/index.js';
import type { EventPayload, ProducerConfig } from './types.js';

const config = JSON.parse(process.argv[2] ?? '{}') as ProducerConfig;
const { schema } = config.db;
const pool = new pg.Pool({
  connectionString: config.db.url,
  application_name: `${config.db.applicationName}-producer`,
  max: config.connections,
});
pool.on('error', () => {});
const outbox = new Outbox({ schema });
const WRITE = `
  WITH accounts AS (
    INSERT INTO "${schema}".accounts (key, version)
    SELECT k, 1 FROM unnest($1::text[]) AS k ORDER BY k
    ON CONFLICT (key) DO UPDATE SET version = accounts.version + 1
    RETURNING key, version)
  INSERT INTO "${schema}".produced (uuid, key, version, at_ms)
  SELECT e.uuid, a.key, a.version, $3 FROM accounts a JOIN unnest($1::text[], $2::text[]) AS e(key, uuid) USING (key)
  RETURNING key, version, uuid`;

let credit = 0;
let committed = 0;
let rolledBack = 0;
let inFlight = 0;
let stopping = false;
let wake = () => {};
// The orchestrator is gone: nothing more to do.
process.once('disconnect', () => process.exit(0));
process.on('message', (message: { credit?: number; stop?: boolean }) => {
  if (message.credit !== undefined) credit = message.credit;
  if (message.stop) stopping = true;
  wake();
});

function pickKeys(): string[] {
  const count = 1 + Math.floor(Math.random() * config.maxPerTransaction);
  const keys = new Set<string>();
  while (keys.size < count) keys.add(`k${Math.floor(Math.random() * config.keys)}`);
  return [...keys].sort();
}

async function transaction(client: pg.PoolClient, keys: string[]): Promise<void> {
  const uuids = keys.map(() => randomUUID());
  await client.query('BEGIN');
  try {
    const { rows } = await client.query<EventPayload>(WRITE, [keys, uuids, Date.now()]);
    await outbox.addMany(
      client,
      rows
        .sort((a, b) => (a.key < b.key ? -1 : 1))
        .map((payload) => ({ topic: config.topic, key: payload.key, payload })),
    );
    if (Math.random() < config.rollbackRate) {
      await client.query('ROLLBACK');
      rolledBack += keys.length;
    } else {
      await client.query('COMMIT');
      committed += keys.length;
    }
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

async function writer(): Promise<void> {
  const client = await pool.connect();
  try {
    while (!stopping) {
      if (committed + inFlight >= credit) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 50);
        });
        continue;
      }
      const keys = pickKeys();
      inFlight += keys.length;
      try {
        await transaction(client, keys);
      } catch (error) {
        // A deadlock or serialization failure is retried by the next loop; anything else is reported.
        const code = (error as { code?: string }).code;
        if (code !== '40P01' && code !== '40001') process.stderr.write(`producer: ${error}\n`);
      } finally {
        inFlight -= keys.length;
      }
    }
  } finally {
    client.release();
  }
}

// Ready once the database answers: the orchestrator starts the clock then.
await pool.query('SELECT 1');
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return Math.round((user + system) / 1_000);
};
process.send?.({ committed, rolledBack, cpuMs: cpuMs() });
const report = setInterval(() => process.send?.({ committed, rolledBack, cpuMs: cpuMs() }), 200);
await Promise.all(Array.from({ length: config.connections }, writer));
clearInterval(report);
process.send?.({ committed, rolledBack, cpuMs: cpuMs(), done: true });
await pool.end();
process.disconnect?.();
