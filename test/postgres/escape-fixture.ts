/**
 * @module The escaped-transaction tests' fixture: a schema of their own with a `payments` table (the effect a
 * handler commits), a PostgresStore whose clock the test can move past a lease, and a count of payment rows.
 */
import { afterAll, beforeAll } from 'vitest';
import { PostgresStore } from '../../src/stores/postgres/index.js';
import { requireService } from '../support/services.js';
import { createTestSchema, type TestSchema } from './support.js';

export interface EscapeFixture {
  readonly db: TestSchema;
  readonly store: PostgresStore;
  /** The payments table, quoted. */
  readonly payments: string;
  /** Payment rows with this id. */
  rowsFor(id: string): Promise<number>;
  /** Moves the store's clock forward: a retry "after the lease" without waiting for it. */
  advance(ms: number): void;
}

/** Registers beforeAll/afterAll; the fields are there from beforeAll on. */
export function escapeFixture(label: string): EscapeFixture {
  let offsetMs = 0;
  const fixture = {
    rowsFor: async (id: string) =>
      Number(
        (await fixture.db.pool.query(`SELECT count(*) FROM ${fixture.payments} WHERE id = $1`, [id])).rows[0]
          .count,
      ),
    advance: (ms: number) => {
      offsetMs += ms;
    },
  } as { -readonly [K in keyof EscapeFixture]: EscapeFixture[K] };
  beforeAll(async () => {
    await requireService('postgres');
    fixture.db = await createTestSchema(label);
    fixture.store = new PostgresStore({
      pool: fixture.db.pool,
      schema: fixture.db.schema,
      clock: () => Date.now() + offsetMs,
    });
    fixture.payments = fixture.db.table('payments');
    await fixture.db.pool.query(`CREATE TABLE ${fixture.payments} (id text NOT NULL)`);
  });
  afterAll(async () => {
    await fixture.store?.close();
    await fixture.db?.drop();
  });
  return fixture;
}
