import { afterAll, beforeAll, describe, it } from 'vitest';
import { type MySqlPool, MySqlStore, migrate } from '../../src/stores/mysql/index.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { requireService } from '../support/services.js';
import { createPool, DRIVERS, dropTable, ISOLATIONS, uniqueTable } from './support.js';

// One table for the file; the kit's keys are random per test, so every run below shares it.
const table = uniqueTable('conformance');
const pools: MySqlPool[] = [];

beforeAll(async () => {
  await requireService('mariadb');
  for (const pool of pools) await migrate(pool, { table });
});
afterAll(async () => {
  if (pools[0] !== undefined) await dropTable(pools[0], table);
  await Promise.all(pools.map((pool) => pool.end()));
});

for (const driver of DRIVERS) {
  for (const isolation of ISOLATIONS) {
    const pool = createPool(driver, { isolation, size: 8 });
    pools.push(pool);
    runStoreConformance({
      name: `MySqlStore on ${driver}, ${isolation}`,
      harness: { describe, it },
      createStore: ({ clock }) => new MySqlStore({ pool, table, clock }),
      stormSize: 200,
      propertyRuns: 40,
    });
  }
}
