-- keys-list: the rows each list of the dashboard shows, never a body. $1 rows per list, $2 the inbox's
-- fingerprint, $3 its parked mark (headers as jsonb). Returns up to 4 × $1 rows: list ('inProgress' least lease
-- left first, 'completed' and 'parked' latest first, 'released' newest first), now_ms, and the record's fields.
WITH clock AS (SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms),
live AS (
  SELECT k.key, k.state, k.attempt, k.token, k.taken_over, k.lease_until_ms, k.created_at_ms, k.completed_at_ms,
    k.expires_at_ms, k.status, c.now_ms,
    (k.state = 'completed' AND k.fingerprint = $2 AND k.headers = $3::jsonb) AS parked
  FROM {{table}} k, clock c
  WHERE k.expires_at_ms > c.now_ms
)
(SELECT 'inProgress' AS list, l.* FROM live l WHERE l.state = 'inProgress' ORDER BY l.lease_until_ms LIMIT $1)
UNION ALL
(SELECT 'completed', l.* FROM live l WHERE l.state = 'completed' ORDER BY l.completed_at_ms DESC LIMIT $1)
UNION ALL
(SELECT 'released', l.* FROM live l WHERE l.state = 'released' ORDER BY l.created_at_ms DESC LIMIT $1)
UNION ALL
(SELECT 'parked', l.* FROM live l WHERE l.parked ORDER BY l.completed_at_ms DESC LIMIT $1)
