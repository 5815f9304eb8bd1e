-- delete: remove the record whatever its state. $1 key, $2 now ms (NULL: the server's clock_timestamp()).
-- Returns one row when a row was removed; `existed` is false when it had already expired.
WITH clock AS (
  SELECT coalesce($2::bigint, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) AS now_ms
),
gone AS (
  DELETE FROM {{table}} k WHERE k.key = $1 RETURNING k.key, k.expires_at_ms
)
SELECT (d.expires_at_ms > c.now_ms) AS existed, {{notify}} FROM gone d, clock c
