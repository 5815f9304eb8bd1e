/**
 * @module Every ORM's transaction objects oncely knows, recognized by shape (no ORM is imported), so a function that
 * takes "the caller's transaction" (`outbox.add(trx, event)`) takes any ORM's as it comes, on PostgreSQL or, told by
 * the ORM's own dialect test (the one its store uses), on MySQL / MariaDB.
 */
import type { HandleKind, MySqlHandleKind } from './driver.js';
import { drizzleTransactions } from './drizzle/handle.js';
import { drizzleMySqlTransactions } from './drizzle/mysql.js';
import { knexTransactions } from './knex/handle.js';
import { isMySqlKnex, knexMySqlTransactions } from './knex/mysql.js';
import { kyselyTransactions } from './kysely/handle.js';
import { isMySqlKysely, kyselyMySqlTransactions } from './kysely/mysql.js';
import { mikroOrmTransactions } from './mikro-orm/handle.js';
import { isMySqlMikroOrm, mikroOrmMySqlTransactions } from './mikro-orm/mysql.js';
import { postgresJsTransactions } from './postgres-js/handle.js';
import { prismaTransactions } from './prisma/handle.js';
import { isMySqlPrisma, prismaMySqlTransactions } from './prisma/mysql.js';
import { typeormTransactions } from './typeorm/handle.js';
import { isMySqlTypeOrm, typeormMySqlTransactions } from './typeorm/mysql.js';

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

/** An ORM's MySQL handle kind, with the dialect test its driver function makes of the ORM's database object. */
interface MySqlOrm {
  readonly kind: MySqlHandleKind<unknown>;
  /** Called only on a value `kind.is` took, which has the shape the test reads. */
  speaksMySql(value: never): boolean;
}

// In KINDS' order. Drizzle's MySQL kind takes only Drizzle's MySQL objects (its PostgreSQL ones are other classes).
const MYSQL_ORMS: readonly MySqlOrm[] = [
  { kind: knexMySqlTransactions, speaksMySql: isMySqlKnex },
  { kind: kyselyMySqlTransactions, speaksMySql: isMySqlKysely },
  { kind: drizzleMySqlTransactions, speaksMySql: () => true },
  { kind: prismaMySqlTransactions, speaksMySql: isMySqlPrisma },
  { kind: mikroOrmMySqlTransactions, speaksMySql: isMySqlMikroOrm },
  { kind: typeormMySqlTransactions, speaksMySql: isMySqlTypeOrm },
] as unknown as readonly MySqlOrm[];

/** The kind of ORM object `value` is when its ORM speaks MySQL / MariaDB, or undefined (PostgreSQL's, or no ORM's). */
export function mysqlHandleKindOf(value: unknown): MySqlHandleKind<unknown> | undefined {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return undefined;
  return MYSQL_ORMS.find((orm) => orm.kind.is(value) && orm.speaksMySql(value as never))?.kind;
}
