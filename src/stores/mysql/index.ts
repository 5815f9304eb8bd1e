/**
 * @module `oncely/mysql`: the MySQL / MariaDB store (plain and transactional mode) and its migration, over a
 * `mysql2/promise` or `mariadb` pool.
 */
export type { MySqlConnection, MySqlPool } from './driver.js';
export { type MigrateOptions, migrate, schemaFor } from './migrate.js';
export type { MySqlStoreOptions } from './options.js';
export { MySqlStore } from './store.js';
export { connectionOf, TransactionalMySqlStore, type TransactionalOptions } from './transactional.js';
