/**
 * Claims a key in transactional mode, writes a business row through the claim's connection, says `holding` and
 * waits, its transaction open, to be killed (transactional.test.ts).
 */
import type { PoolConnection } from 'mysql2/promise';
import { Engine } from '../../../src/index.js';
import { scopedKey } from '../../../src/store.js';
import { connectionOf, MySqlStore } from '../../../src/stores/mysql/index.js';
import { createPool, type DriverName } from '../support.js';

const { driver, table, payments, id } = JSON.parse(process.argv[2] ?? '{}') as {
  driver: DriverName;
  table: string;
  payments: string;
  id: string;
};
const pool = createPool(driver, { size: 2 });
const engine = new Engine({ store: new MySqlStore({ pool, table }).transactional(), leaseMs: 60_000 });
const begun = await engine.begin({ key: scopedKey('fn:killed', id), fingerprint: 'f' });
if (begun.kind !== 'acquired') throw new Error(`expected acquired, got ${begun.kind}`);
await connectionOf<PoolConnection>(begun.claim).query(`INSERT INTO ${payments} (id, cents) VALUES (?, 3)`, [
  id,
]);
process.stdout.write('holding\n');
setInterval(() => {}, 60_000);
