-- complete-in-transaction: complete.sql for a transactional claim, run inside its transaction, and only while that
-- transaction is still the claim's. $1..$9 as in complete.sql; $10 the top-level transaction id the claim was
-- written under (pg_current_xact_id_if_assigned() at the claim, never NULL there: the claim wrote its row).
-- The holder's code may have ended that transaction on the handed-out connection (COMMIT, END, COMMIT AND CHAIN,
-- `COMMIT; BEGIN` in one string, ROLLBACK …): the outcome then lands in another transaction, or in none, and the
-- key's record no longer commits with the writes. PostgreSQL reports some of these (ReadyForQuery 'I', warnings
-- 25001 / 25P01) and not others (AND CHAIN, a BEGIN in the same string leave the status at 'T' and warn of
-- nothing), so the transaction id decides: it is the same on every driver (pg, pg-native), through a savepoint
-- (joined mode: the top-level id, which a ROLLBACK TO SAVEPOINT keeps), whatever the statements were (simple or
-- extended protocol, a user's prepared statement, a procedure) and on whatever server connection a pooler routes to.
-- Returns ONE row: held (false: the transaction is not the claim's any more, and nothing was written) and key
-- (NULL when fenced, which the open transaction's row lock rules out short of a bug).
--@include clock now=$9
, held AS MATERIALIZED (
  SELECT coalesce(pg_current_xact_id_if_assigned() = $10::xid8, false) AS ours
)
, done AS (
  UPDATE {{table}} k SET
    state = 'completed',
    status = $3::integer,
    headers = $4::jsonb,
    body = $5::bytea,
    encoding = $6,
    storage = $7,
    completed_at_ms = c.now_ms,
    expires_at_ms = c.now_ms + $8::bigint
  FROM clock c, held h
  WHERE h.ours AND k.key = $1 AND k.token = $2::bigint AND k.state = 'inProgress' AND k.expires_at_ms > c.now_ms
  RETURNING k.key
)
SELECT h.ours AS held, d.* FROM held h LEFT JOIN (SELECT {{notify}} FROM done d) d ON true
