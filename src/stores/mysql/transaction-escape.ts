/**
 * @module How transactional mode on MySQL tells, after the fact, that the holder's code committed the claim itself
 * (an escape: `COMMIT` sent through the handed-out connection or ORM transaction). MySQL has no transaction id to
 * compare (PostgreSQL's check) and `@@in_transaction` is MariaDB's only, so the record decides: after a rollback, a
 * row that still carries the claim's token in progress was made durable by a COMMIT that was not oncely's. Joined
 * mode needs none of this: its savepoint is gone when the caller's transaction ended (transaction-join.ts).
 */
import type { Executor } from './driver.js';
import { keyBytes, numberOf, stateOf } from './rows.js';
import type { MySqlRuntime } from './runtime.js';

/**
 * Whether the claim's row is durable with the claim still in progress, read on `on` (the claim's own connection
 * after its ROLLBACK, or the pool). A read that fails tells nothing (false): the key then stays in progress until
 * its lease ends and a takeover, as before.
 */
export async function claimCommitted(
  runtime: MySqlRuntime,
  key: string,
  token: number,
  on?: Executor,
): Promise<boolean> {
  try {
    const values = { key: keyBytes(key), now: runtime.now() };
    const { rows } = await runtime.run('get', runtime.statements.get, values, on);
    const row = rows[0];
    return row !== undefined && stateOf(row.state) === 'inProgress' && numberOf(row.token, 'token') === token;
  } catch {
    return false;
  }
}
