-- replay-dead-letters: put dead letters back in line with a fresh attempt count, due now.
-- $1 ids (bigint[]; NULL: every dead letter), $2 topic (text; NULL: any).
-- Returns one row: count (integer, the rows replayed). {{notify}} wakes idle relays at commit.
-- Each row gets a new xid (this statement's), so it queues behind its key's pending rows instead of overtaking
-- one in flight (see claim.sql).
WITH replayed AS (
  UPDATE {{table}}
  SET state = 0, attempts = 0, available_at = now(), dead_at = NULL, lease_until = NULL, leased_by = NULL,
      xid = pg_current_xact_id()
  WHERE state = 2 AND ($1::bigint[] IS NULL OR id = ANY($1::bigint[])) AND ($2::text IS NULL OR topic = $2)
  RETURNING 1
)
SELECT count(*)::int AS count{{notify}} FROM replayed
