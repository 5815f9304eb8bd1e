/**
 * @module The claim as ONE statement that bounds its own lock wait, for ORMs: pg mode sends `set lock_timeout; claim;
 * restore, transaction id` as one simple-query message, which some ORMs cannot send (Kysely and Prisma take one
 * statement per call), and three calls would be three round trips. Here begin.sql itself sets `lock_timeout` before
 * it can wait (its clock, which every write of the claim reads, is computed from the setting's CTE), and its answer
 * restores the setting and reads the transaction id (computed from the claim's rows, so after its writes).
 *
 * A claim that answers no row (stale) leaves the bound set; it is rolled back then (the whole transaction, or the
 * savepoint in joined mode, which undoes a `set_config(…, true)` made inside it).
 */
import { InvalidOptionsError } from '../core/errors.js';

const CLOCK = /^WITH clock AS \(\n\s*SELECT (.+) AS now_ms\n\)/;
const ANSWER = '\n)\nSELECT ';

/** begin.sql (rendered) made to bound its lock wait at `lockTimeoutMs` and answer the `xid` column too. */
export function boundedClaim(begin: string, lockTimeoutMs: number): string {
  const clock = CLOCK.exec(begin);
  const answerAt = begin.lastIndexOf(ANSWER);
  if (clock === null || answerAt < 0 || !Number.isSafeInteger(lockTimeoutMs)) {
    // The statement's shape is oncely's own: a mismatch is a bug, caught by every ORM test.
    throw new InvalidOptionsError('the claim statement does not have the shape the ORM claim expects');
  }
  const settings = [
    "WITH oncely_prior AS MATERIALIZED (SELECT current_setting('lock_timeout') AS lock_timeout),",
    `oncely_bound AS MATERIALIZED (SELECT set_config('lock_timeout', '${lockTimeoutMs}ms', true) AS lock_timeout FROM oncely_prior),`,
    `clock AS (\n  SELECT ${clock[1]} AS now_ms FROM oncely_bound\n)`,
  ].join('\n');
  const body = begin.slice(clock[0].length, answerAt + 2);
  const answer = begin.slice(answerAt + 3);
  return [
    `${settings}${body},`,
    `oncely_answer AS (\n${answer}\n)`,
    "SELECT a.*, set_config('lock_timeout', p.lock_timeout, true) AS oncely_restored,",
    '  pg_current_xact_id_if_assigned()::text AS xid',
    'FROM oncely_answer a, oncely_prior p',
  ].join('\n');
}
