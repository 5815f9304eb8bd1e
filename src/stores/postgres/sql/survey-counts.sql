-- survey-counts: records by state for the inspector's survey (the dashboard, the CLI), bounded: the walk reads at
-- most $2 + 1 live rows, newest expiry first down the expiry index, and counts the first $2 (the one more only
-- tells whether the walk stopped early). Rows past expires_at_ms do not exist logically (as for get).
-- $1 now ms (NULL: clock_timestamp()), $2 scan limit, $3 key prefix (NULL: every key), $4 the mark's fingerprint
-- and $5 its outcome headers as jsonb (NULL: no mark).
-- Returns one row: walked (rows read, up to $2 + 1), records, in_progress, completed, released, lease_expired,
-- marked.
--@include clock now=$1
, walked AS (
  -- Numbered outside the limited walk: a window ordered by the expiry would read ahead of the LIMIT.
  SELECT l.*, row_number() OVER () AS n
  FROM (
    SELECT k.key, k.state, k.lease_until_ms, c.now_ms,
      (k.state = 'completed' AND k.fingerprint = $4::text AND k.headers = $5::jsonb
        AND octet_length(k.body) = 0) AS marked
    FROM {{table}} k, clock c
    WHERE k.expires_at_ms > c.now_ms
    ORDER BY k.expires_at_ms DESC
    LIMIT $2::integer + 1
  ) l
),
counted AS (
  SELECT * FROM walked w WHERE w.n <= $2::integer AND ($3::text IS NULL OR starts_with(w.key, $3::text))
)
SELECT (SELECT count(*) FROM walked) AS walked,
  count(*) AS records,
  count(*) FILTER (WHERE w.state = 'inProgress') AS in_progress,
  count(*) FILTER (WHERE w.state = 'completed') AS completed,
  count(*) FILTER (WHERE w.state = 'released') AS released,
  count(*) FILTER (WHERE w.state = 'inProgress' AND w.lease_until_ms <= w.now_ms) AS lease_expired,
  count(*) FILTER (WHERE w.marked) AS marked
FROM counted w
