/**
 * @module `oncely/postgres`: the PostgreSQL store, its transactional mode with `transactionOf`, and the schema
 * migration (`migrate`, `schemaFor`).
 */
export { transactionOf } from './context.js';
export { type MigrateOptions, migrate, schemaFor } from './migrate.js';
export type { PostgresStoreOptions } from './options.js';
export { PostgresStore } from './store.js';
export type { IsolationLevel } from './transaction-run.js';
export { type TransactionalOptions, TransactionalPostgresStore } from './transactional.js';
