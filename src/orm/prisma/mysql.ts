/**
 * @module Prisma 7 on MySQL / MariaDB (`@prisma/adapter-mariadb`) for oncely: the same client and interactive
 * transaction client objects as on PostgreSQL, one statement per raw query: `$queryRawUnsafe` for the statements
 * that answer rows (SELECT, CALL), `$executeRawUnsafe` for the others (its answer is the affected-row count).
 *
 * The adapter runs every statement as a prepared one and reads a result's column names from its metadata, which a
 * CALL's result set does not carry there: Prisma hands the CALL's first row back as one array of values under the
 * key `undefined`. Those values are passed on as `values`, in the procedure's column order, and the store names them
 * (`callAnswerColumns`: its procedures' answers are its own, one row each).
 */
import type { MySqlAnswer, MySqlHandleKind, RawRow } from '../driver.js';
import { type PrismaClientLike, type PrismaRawQueries, prismaTransactions } from './handle.js';

// Statements that answer rows, by their first word; any other answers an affected-row count.
const ANSWERS_ROWS = new Set(['select', 'call', 'show', 'with']);

const firstWord = (statement: string): string => /^\s*([A-Za-z]+)/.exec(statement)?.[1]?.toLowerCase() ?? '';

/** Whether the client was generated for MySQL (`provider = "mysql"`, the one `@prisma/adapter-mariadb` serves). */
export function isMySqlPrisma(client: PrismaClientLike): boolean {
  return (client as { _activeProvider?: unknown })._activeProvider === 'mysql';
}

/** One statement on the client (autocommit) or on an interactive transaction client (its connection). */
export async function queryMySql(handle: PrismaRawQueries, statement: string): Promise<MySqlAnswer> {
  if (!ANSWERS_ROWS.has(firstWord(statement))) {
    return { rows: [], affectedRows: Number(await handle.$executeRawUnsafe(statement)) };
  }
  const rows = await handle.$queryRawUnsafe<RawRow[]>(statement);
  const unnamed = rows[0]?.undefined;
  if (Array.isArray(unnamed)) return { rows: [], affectedRows: 0, values: unnamed };
  return { rows, affectedRows: 0 };
}

/** Prisma's clients and interactive transaction clients on MySQL: recognized and checked as on PostgreSQL. */
export const prismaMySqlTransactions: MySqlHandleKind<PrismaRawQueries> = {
  name: 'prisma',
  is: prismaTransactions.is,
  inTransaction: prismaTransactions.inTransaction,
  query: queryMySql,
};
