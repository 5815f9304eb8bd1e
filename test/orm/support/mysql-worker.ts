/**
 * A child process of the MySQL ORM suite: the fixture's ORM on the suite's tables, paying through oncely, driven by
 * lines on stdin. `storm <id> <n>` runs n concurrent payments of one key and prints their answers as JSON; `hang
 * <id>` inserts the payment, prints `inside`, and never finishes (the parent SIGKILLs it).
 */
import { createInterface } from 'node:readline';
import { idempotent } from '../../../src/index.js';
import type { MySqlOrmFixture, MySqlTables } from './mysql-fixture.js';

const { orm, tables, url } = JSON.parse(process.argv[2]!) as {
  orm: string;
  tables: MySqlTables;
  url: string;
};
const { mysqlFixture } = (await import(`../${orm}/mysql-fixture.ts`)) as {
  mysqlFixture: MySqlOrmFixture<unknown>;
};
const world = await mysqlFixture.open(tables, url, 4);
let hang = false;
const pay = idempotent(
  async (payment: { id: string; cents: number }, context) => {
    const handle = world.store.transactionOf(context);
    await world.insertPayment(handle, payment.id, payment.cents);
    if (hang) {
      process.stdout.write(`inside ${await world.connectionId(handle)}\n`);
      await new Promise(() => {});
    }
    return { paid: payment.cents };
  },
  { store: world.store, scope: 'pay', key: (payment) => payment.id, waitMs: 20_000, leaseMs: 30_000 },
);

process.stdout.write('ready\n');
for await (const line of createInterface({ input: process.stdin })) {
  const [command, id = '', count = '1'] = line.split(' ');
  if (command === 'exit') break;
  if (command === 'hang') {
    hang = true;
    void pay.execute({ id, cents: 100 });
  }
  if (command === 'storm') {
    const answers = await Promise.all(
      Array.from({ length: Number(count) }, () =>
        pay
          .execute({ id, cents: 100 })
          .catch((error: Error) => ({ error: error.name, message: error.message })),
      ),
    );
    process.stdout.write(`${JSON.stringify(answers)}\n`);
  }
}
await world.close();
process.exit(0);
