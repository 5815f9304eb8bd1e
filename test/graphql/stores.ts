/**
 * @module The stores the GraphQL and tRPC suites run on: MemoryStore, the machine's Redis under a prefix of the
 * file's own, and the machine's PostgreSQL in a migrated schema of the file's own (each removed afterwards; the
 * setups are the shared ones of test/support/stores.ts).
 */
import { memoryStore, postgresStore, redisStore, type StoreSetup } from '../support/stores.js';

export type { StoreSetup };

/** Memory, Redis and PostgreSQL, for a suite run once on each. */
export function adapterStores(label: string): StoreSetup[] {
  return [memoryStore, redisStore(label), postgresStore(label)];
}
