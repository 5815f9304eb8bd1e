/**
 * What each ORM's test fixture gives the shared transactional suite (test/orm/support/suite.ts): the ORM set up on
 * a schema of its own, the store built on it as its docs page shows, and the few business operations the suite
 * needs, each written with the ORM's own API (never raw pg), so the suite proves what a user of that ORM gets.
 */
import type { OrmStore } from '../../../src/orm/orm-store.js';

export interface OrmWorld<Handle> {
  /** The store under test, on the fixture's ORM object. */
  readonly store: OrmStore<Handle>;
  /** `"schema".orm_payments (id text primary key, cents integer not null)`, made by the fixture. */
  readonly schema: string;
  /** The ORM's database object itself (Kysely instance, PrismaClient, Drizzle db, …): never inside a transaction. */
  readonly db: object;
  /** Inserts one payment through the ORM's transaction handle (the ORM's query builder or model API). */
  insertPayment(handle: Handle, id: string, cents: number): Promise<void>;
  /** Runs `work` in a transaction the caller opened with the ORM's own API (for join mode); the ORM commits. */
  userTransaction<T>(work: (handle: Handle) => Promise<T>): Promise<T>;
  /** Sends `COMMIT` through the ORM's raw query on the handle (an escape the store must refuse or name). */
  rawCommit(handle: Handle): Promise<void>;
  /** Payments with this id, counted on a plain pg pool (what committed). */
  count(id: string): Promise<number>;
  /** Closes the ORM (its pool) and drops the schema. */
  close(): Promise<void>;
}

export interface OrmFixture<Handle> {
  readonly name: string;
  /** Sets up a fresh schema (migrated: oncely_keys, oncely_outbox, orm_payments) and the ORM on it. */
  open(label: string): Promise<OrmWorld<Handle>>;
  /**
   * The ORM on a schema `open` made already, for a child process of the suite (storms, SIGKILL): its `close` ends
   * the ORM's pool and leaves the schema. `poolSize` bounds the ORM's pool where the ORM lets it.
   */
  attach(schema: string, poolSize?: number): Promise<OrmWorld<Handle>>;
}
