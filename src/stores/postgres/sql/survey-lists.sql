-- survey-lists: the rows each list of the inspector's survey shows, never a body, from the same bounded walk as
-- survey-counts (at most $2 live rows, newest expiry first down the expiry index).
-- $1 now ms (NULL: clock_timestamp()), $2 scan limit, $3 rows per list, $4 key prefix (NULL: every key), $5 the
-- mark's fingerprint and $6 its outcome headers as jsonb (NULL: no mark), $7 the lists wanted ('inProgress,completed').
-- Returns up to 4 × $3 rows: list ('inProgress' least lease left first, 'completed' and 'marked' latest first,
-- 'released' newest first), now_ms and the record's fields.
--@include clock now=$1
, walked AS (
  SELECT k.key, k.label, k.state, k.fingerprint, k.token, k.attempt, k.taken_over, k.lease_until_ms, k.created_at_ms,
    k.completed_at_ms, k.expires_at_ms, k.status, c.now_ms,
    (k.state = 'completed' AND k.fingerprint = $5::text AND k.headers = $6::jsonb
      AND octet_length(k.body) = 0) AS marked
  FROM {{table}} k, clock c
  WHERE k.expires_at_ms > c.now_ms
  ORDER BY k.expires_at_ms DESC
  LIMIT $2::integer
),
live AS (
  SELECT * FROM walked w WHERE $4::text IS NULL OR starts_with(w.key, $4::text)
),
wanted AS (SELECT string_to_array($7::text, ',') AS lists)
(SELECT 'inProgress' AS list, l.* FROM live l, wanted x
  WHERE l.state = 'inProgress' AND 'inProgress' = ANY(x.lists) ORDER BY l.lease_until_ms LIMIT $3::integer)
UNION ALL
(SELECT 'completed', l.* FROM live l, wanted x
  WHERE l.state = 'completed' AND 'completed' = ANY(x.lists) ORDER BY l.completed_at_ms DESC LIMIT $3::integer)
UNION ALL
(SELECT 'released', l.* FROM live l, wanted x
  WHERE l.state = 'released' AND 'released' = ANY(x.lists) ORDER BY l.created_at_ms DESC LIMIT $3::integer)
UNION ALL
(SELECT 'marked', l.* FROM live l WHERE l.marked ORDER BY l.completed_at_ms DESC LIMIT $3::integer)
