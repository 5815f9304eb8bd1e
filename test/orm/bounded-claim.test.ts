import { randomBytes } from 'node:crypto';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProgressError, idempotent } from '../../src/index.js';
import { boundedClaim } from '../../src/orm/bounded-claim.js';
import { KyselyStore } from '../../src/orm/kysely/index.js';
import { migrate } from '../../src/stores/postgres/index.js';
import { statementsFor, tableTarget } from '../../src/stores/postgres/sql.js';
import { requireService, services } from '../support/services.js';

// The ORM claim is one statement that bounds its own lock wait (bounded-claim.ts). Shown on Kysely, which sends one
// statement per call, so nothing else in the message could set or restore the bound.
let pool: pg.Pool;
let db: Kysely<Record<string, never>>;
const schema = `oncely_test_bounded_${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  await requireService('postgres');
  pool = new pg.Pool({ connectionString: services.postgres.url, max: 6 });
  await migrate(pool, { schema });
  db = new Kysely({ dialect: new PostgresDialect({ pool }) });
});
afterAll(async () => {
  await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await db?.destroy();
});

describe('the ORM claim bounds its own lock wait, and only its own', () => {
  it("the handler's statements run under the lock_timeout the session had, not the claim's", async () => {
    const store = new KyselyStore({ db, schema, lockTimeoutMs: 77 });
    const seen = await idempotent(
      async (_: string, context) => {
        const { rows } = await sql<{
          lock_timeout: string;
        }>`SELECT current_setting('lock_timeout') AS lock_timeout`.execute(store.transactionOf(context));
        return rows[0]!.lock_timeout;
      },
      { store, scope: 'setting', key: (id) => id },
    ).execute('setting');
    expect(seen.value).toBe('0');
  });

  it('a duplicate of an open transaction that does not wait answers in progress while the holder still holds', async () => {
    const store = new KyselyStore({ db, schema, lockTimeoutMs: 50 });
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => {
      inside = resolve;
    });
    const pay = idempotent(
      async () => {
        inside();
        await held;
        return 'paid';
      },
      { store, scope: 'busy', key: (id: string) => id, waitMs: 0 },
    );
    const holder = pay.execute('busy');
    await entered;
    // Without the bound, this claim would queue behind the holder's uncommitted row until it commits (never, here).
    await expect(pay.execute('busy')).rejects.toBeInstanceOf(InProgressError);
    letGo();
    expect((await holder).value).toBe('paid');
  });

  it('refuses a statement of another shape instead of sending it unbounded', () => {
    const { begin } = statementsFor(tableTarget('public', 'oncely_keys'), { notify: false });
    expect(boundedClaim(begin, 100)).toContain("set_config('lock_timeout', '100ms', true)");
    expect(() => boundedClaim(begin.replace('WITH clock AS', 'WITH clocks AS'), 100)).toThrow(/shape/);
  });
});
