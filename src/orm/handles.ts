/**
 * @module Every ORM's transaction objects oncely knows, recognized by shape (no ORM is imported), so a function that
 * takes "the caller's transaction" (`outbox.add(trx, event)`) takes any ORM's as it comes.
 */
import type { HandleKind } from './driver.js';
import { drizzleTransactions } from './drizzle/handle.js';
import { knexTransactions } from './knex/handle.js';
import { kyselyTransactions } from './kysely/handle.js';
import { mikroOrmTransactions } from './mikro-orm/handle.js';
import { postgresJsTransactions } from './postgres-js/handle.js';
import { prismaTransactions } from './prisma/handle.js';
import { typeormTransactions } from './typeorm/handle.js';

// Most specific shapes first: a Knex transaction or a postgres.js `sql` is a function with properties, a TypeORM
// EntityManager has a `query` method as pg's clients do.
const KINDS: readonly HandleKind<unknown>[] = [
  knexTransactions,
  postgresJsTransactions,
  kyselyTransactions,
  drizzleTransactions,
  prismaTransactions,
  mikroOrmTransactions,
  typeormTransactions,
] as unknown as readonly HandleKind<unknown>[];

/** The kind of ORM object `value` is, or undefined (a pg client, or something else). */
export function handleKindOf(value: unknown): HandleKind<unknown> | undefined {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return undefined;
  return KINDS.find((kind) => kind.is(value));
}
