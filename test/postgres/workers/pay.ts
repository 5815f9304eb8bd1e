// A payments process for the cross-process tests: the PostgreSQL store in transactional mode, a handler whose
// business INSERT goes through the transaction oncely hands it. Config: one JSON argument. Commands on stdin:
//   storm <key> <count> <waitMs>  fire <count> concurrent identical requests, then print one JSON report line
//   hang <key>                    run one request whose handler inserts its row, prints "inside <backend pid>",
//                                 and never ends
//   exit
import { createInterface } from 'node:readline';
import pg from 'pg';
import { idempotent, isInProgressError } from '../../../src/index.js';
import { PostgresStore, transactionOf } from '../../../src/stores/postgres/index.js';

const { url, schema, payments, poolSize } = JSON.parse(process.argv[2] ?? '{}') as {
  url: string;
  schema: string;
  payments: string;
  poolSize: number;
};
const pool = new pg.Pool({ connectionString: url, max: poolSize });
pool.on('error', () => {});
const store = new PostgresStore({ pool, schema });

function handler(waitMs: number, hang: boolean) {
  return idempotent(
    async (request: { key: string; cents: number }, context) => {
      const client = transactionOf(context);
      const { rows } = await client.query(
        `INSERT INTO ${payments} (id, cents, worker) VALUES ($1, $2, $3) RETURNING serial, pg_backend_pid() AS pid`,
        [request.key, request.cents, process.pid],
      );
      if (hang) {
        process.stdout.write(`inside ${rows[0].pid}\n`);
        await new Promise(() => {});
      }
      // Long enough that the other processes' duplicates arrive while this transaction is still open.
      await client.query('SELECT pg_sleep(0.2)');
      return { payment: rows[0].serial as number, worker: process.pid, token: context.token };
    },
    { store: store.transactional(), scope: 'pay', key: (request) => request.key, waitMs },
  );
}

const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
for await (const line of lines) {
  const [command, key = '', count = '1', waitMs = '0'] = line.split(' ');
  if (command === 'exit') break;
  if (command === 'hang') {
    void handler(0, true)({ key, cents: 100 });
    continue;
  }
  const pay = handler(Number(waitMs), false);
  const kinds: Record<string, number> = {};
  const values = new Set<string>();
  const errors = new Set<string>();
  await Promise.all(
    Array.from({ length: Number(count) }, async () => {
      try {
        const result = await pay.execute({ key, cents: 100 });
        const kind = result.replayed ? 'replayed' : 'executed';
        kinds[kind] = (kinds[kind] ?? 0) + 1;
        values.add(JSON.stringify(result.value));
      } catch (error) {
        const kind = isInProgressError(error) ? 'inProgress' : 'error';
        kinds[kind] = (kinds[kind] ?? 0) + 1;
        if (kind === 'error') errors.add(String(error));
      }
    }),
  );
  process.stdout.write(`${JSON.stringify({ kinds, values: [...values], errors: [...errors] })}\n`);
}
await store.close();
await pool.end();
