/**
 * @module The driver of oncely's ORM mode on one PrismaClient (Prisma 7 with `@prisma/adapter-pg`, or
 * `@prisma/adapter-mariadb` for MySQL / MariaDB: mysql.ts): autocommit statements on the client, and transactions
 * opened through Prisma's interactive `$transaction`, whose callback's client is the handle the handler writes
 * through.
 */
import type {
  IsolationLevel,
  MySqlSqlDriver,
  OrmDriver,
  RawRow,
  SqlDriver,
  TransactionOptions,
} from '../driver.js';
import {
  type PrismaClientLike,
  type PrismaIsolationLevel,
  type PrismaTransaction,
  prismaTransactions,
} from './handle.js';
import { isMySqlPrisma, prismaMySqlTransactions, queryMySql } from './mysql.js';

const ISOLATION: Readonly<Record<IsolationLevel, PrismaIsolationLevel>> = {
  'read committed': 'ReadCommitted',
  'repeatable read': 'RepeatableRead',
  serializable: 'Serializable',
};

/** oncely's driver on `client`: its transactions hand out `client`'s own interactive transaction client. */
export function prismaDriver<Client extends PrismaClientLike>(
  client: Client,
): OrmDriver<PrismaTransaction<Client>> {
  const transaction = <T>(
    work: (handle: PrismaTransaction<Client>) => Promise<T>,
    options: TransactionOptions,
  ): Promise<T> => {
    // `timeout` is Prisma's own clock on an interactive transaction (default 5 s): past it Prisma rolls back and
    // refuses the handle. oncely asks for the lease plus a margin, so the lease ends first.
    // `maxWait` bounds the wait for a pool connection (default 2 s). Duplicates of a key hold theirs while they
    // wait for the winner's row, so a burst larger than the pool would fail after 2 s with "Unable to start a
    // transaction in the given time" (a 503) where a pg pool would queue: they may wait as long as a claim may
    // hold a transaction.
    // The cast names what Prisma hands the callback: `Client`'s transaction client, the very type
    // PrismaTransaction<Client> reads off this callback's parameter.
    const transaction = client.$transaction((handle) => work(handle as PrismaTransaction<Client>), {
      ...(options.isolation === undefined ? {} : { isolationLevel: ISOLATION[options.isolation] }),
      timeout: options.timeoutMs,
      maxWait: options.timeoutMs,
    });
    return Promise.resolve(transaction);
  };
  // The kinds are static and typed on the raw queries every Prisma client has; `is` is a shape check, so a handle
  // it accepts is as much `Client`'s transaction client as the shape can tell, which is all a runtime check can.
  if (isMySqlPrisma(client)) {
    return {
      dialect: 'mysql',
      kind: prismaMySqlTransactions as unknown as MySqlSqlDriver<PrismaTransaction<Client>>['kind'],
      query: (statement) => queryMySql(client, statement),
      transaction,
    };
  }
  return {
    kind: prismaTransactions as unknown as SqlDriver<PrismaTransaction<Client>>['kind'],
    run(statements: readonly string[]): Promise<RawRow[][]> {
      return prismaTransactions.run(client, statements);
    },
    transaction,
  };
}
