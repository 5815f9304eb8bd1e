/**
 * @module The MySQL server as the pool was configured, for telemetry: only what is known without a network call.
 */
import type { StoreEndpoint } from '../../core/store.js';
import type { Driver } from './driver.js';

/**
 * `system` is `mariadb` for a pool of the mariadb connector and `mysql` otherwise: the driver is what is known
 * without asking the server (both drivers talk to both servers). mysql2 tells its host, port and database; the
 * mariadb connector keeps its configuration private.
 */
export function mysqlEndpoint(driver: Driver, table: string): StoreEndpoint {
  const { host, port, database } = driver.configured;
  return {
    system: driver.kind === 'mariadb' ? 'mariadb' : 'mysql',
    ...(typeof host === 'string' && host !== '' ? { address: host } : {}),
    ...(typeof port === 'number' && Number.isInteger(port) ? { port } : {}),
    ...(typeof database === 'string' && database !== '' ? { namespace: database } : {}),
    collection: typeof database === 'string' && database !== '' ? `${database}.${table}` : table,
  };
}
