-- inspect-record: one record for the inspector's view, unless it expired: the body's size always, its bytes only
-- when asked. $1 key, $2 now ms (NULL: clock_timestamp()), $3 whether to return the body.
--@include clock now=$2
SELECT k.key, k.label, k.state, k.fingerprint, k.token, k.attempt, k.taken_over, k.lease_until_ms, k.created_at_ms,
  k.completed_at_ms, k.expires_at_ms, k.status, k.headers::text AS headers, octet_length(k.body) AS body_bytes,
  CASE WHEN $3::boolean THEN k.body ELSE ''::bytea END AS body, k.encoding, k.storage, c.now_ms
FROM {{table}} k, clock c
WHERE k.key = $1 AND k.expires_at_ms > c.now_ms
