-- purge: delete one bounded batch of expired rows. $1 batch size, $2 now ms (NULL: clock_timestamp()).
-- Returns one row: removed (the number of rows deleted).
-- A row whose token the clock has not passed yet stays (see delete.sql): the next claim must still out-rank it.
-- Walks the expiry index from the oldest; SKIP LOCKED passes over rows a live transaction is reclaiming, so a
-- purge never waits on (or blocks) a request. Each batch is its own short statement: no long lock, no huge DELETE.
--@include clock now=$2
, victims AS (
  SELECT k.key FROM {{table}} k, clock c
  WHERE k.expires_at_ms <= c.now_ms AND k.token < c.now_ms
  ORDER BY k.expires_at_ms
  LIMIT $1::integer
  FOR UPDATE OF k SKIP LOCKED
),
gone AS (
  DELETE FROM {{table}} k USING victims v WHERE k.key = v.key RETURNING 1
)
SELECT count(*) AS removed FROM gone
