-- get: the record as stored, unless it expired (expired rows wait for purge but no longer exist logically).
-- $1 key, $2 now ms (NULL: the server's clock_timestamp()).
--@include clock now=$2
SELECT k.key, k.state, k.fingerprint, k.token, k.attempt, k.lease_until_ms, k.created_at_ms, k.completed_at_ms,
  k.expires_at_ms, k.status, k.headers::text AS headers, k.body, k.encoding, k.storage, k.label
FROM {{table}} k, clock c
WHERE k.key = $1 AND k.expires_at_ms > c.now_ms
