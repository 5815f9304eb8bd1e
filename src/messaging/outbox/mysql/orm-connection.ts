/**
 * @module `outbox.add(trx, event)` with an ORM's transaction on MySQL / MariaDB (Kysely, Knex, Drizzle, TypeORM,
 * MikroORM, Prisma): the caller's transaction object as the writer's connection. The writer's statements (the key's
 * lock, the probe, one insert per event: the same as on a driver connection) go through the ORM's raw query on the
 * transaction's own connection, as the ORM stores send theirs (`runThrough`, values written in as literals), so the
 * events commit or roll back with it and the key's lock is held until the ORM's COMMIT or ROLLBACK.
 */
import type { MySqlHandleKind } from '../../../orm/driver.js';
import { runThrough } from '../../../orm/mysql-source.js';
import type { UserConnection, WriteAnswer } from './connection.js';

// As digits: exact past 2^53, whatever the ORM makes of a BIGINT UNSIGNED.
const LAST_INSERT_ID = 'SELECT CAST(LAST_INSERT_ID() AS CHAR) AS id';

/**
 * The writer's connection over `handle`. The caller has checked that the handle is inside a transaction, by the
 * ORM's own state (the refusal PostgreSQL makes: writer.ts), so every answer says so.
 */
export function ormConnection<Handle>(kind: MySqlHandleKind<Handle>, handle: Handle): UserConnection {
  const query = (statement: string) => kind.query(handle, statement);
  return {
    driver: kind.name,
    async run(sql, values, needsId = false): Promise<WriteAnswer> {
      const answer = await runThrough(query, sql, values);
      let insertId = answer.insertId;
      // Prisma's raw query answers a write with its count only: the id is then the connection's LAST_INSERT_ID().
      if (insertId === undefined && needsId) {
        const [row] = (await runThrough(query, LAST_INSERT_ID, [])).rows;
        insertId = String(row?.id ?? 0);
      }
      return { affectedRows: answer.affectedRows, insertId: insertId ?? '0', inTransaction: true };
    },
  };
}
