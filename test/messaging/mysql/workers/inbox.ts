// An inbox on a transactional MySqlStore in a process of its own, for the crash test. Config (ONCELY_WORKER): driver,
// store table, schema (of the outbox and the effects table), lease, and the message. The handler writes its effect
// and an outbox event through the inbox's transaction, reports "stalled" and hangs, so the test can SIGKILL the
// process with the transaction open.
import { Inbox } from '../../../../src/messaging/consumer.js';
import { Outbox } from '../../../../src/messaging/outbox/index.js';
import { connectionOf, MySqlStore } from '../../../../src/stores/mysql/index.js';
import { createPool, type DriverName } from '../../../mysql/support.js';
import { report } from '../../support/children.js';

interface Config {
  readonly driver: DriverName;
  readonly table: string;
  readonly schema: string;
  readonly leaseMs: number;
  readonly message: { readonly id: string; readonly amount: number };
}

const config = JSON.parse(process.env.ONCELY_WORKER!) as Config;
const pool = createPool(config.driver, { size: 4 });
const outbox = new Outbox({ schema: config.schema });
const inbox = new Inbox(
  async (message: Config['message'], context) => {
    const connection = connectionOf(context);
    await connection.query(`INSERT INTO \`${config.schema}\`.effects (id, amount, pid) VALUES (?, ?, ?)`, [
      message.id,
      message.amount,
      process.pid,
    ]);
    await outbox.add(connection, { topic: 'credited', key: message.id, payload: message });
    report({ type: 'stalled', pid: process.pid });
    await new Promise<never>(() => {});
  },
  {
    store: new MySqlStore({ pool, table: config.table }).transactional(),
    messageId: (message) => message.id,
    leaseMs: config.leaseMs,
  },
);
report({ type: 'ready', pid: process.pid });
await inbox.handle(config.message, { redelivered: false });
