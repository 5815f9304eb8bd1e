-- purge: delete one bounded batch of expired rows. $1 batch size, $2 now ms (NULL: clock_timestamp()).
-- Returns one row: removed (the number of rows deleted).
-- Walks the expiry index from the oldest; SKIP LOCKED passes over rows a live transaction is reclaiming, so a
-- purge never waits on (or blocks) a request. Each batch is its own short statement: no long lock, no huge DELETE.
WITH clock AS (
  SELECT coalesce($2::bigint, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) AS now_ms
),
victims AS (
  SELECT k.key FROM {{table}} k, clock c
  WHERE k.expires_at_ms <= c.now_ms
  ORDER BY k.expires_at_ms
  LIMIT $1::integer
  FOR UPDATE OF k SKIP LOCKED
),
gone AS (
  DELETE FROM {{table}} k USING victims v WHERE k.key = v.key RETURNING 1
)
SELECT count(*) AS removed FROM gone
