-- inspect-record: one record for the inspector's view, unless it expired: the body's size always, its bytes only
-- when asked. :key, :now ms (NULL: the server's UTC clock), :body (1: return the body's bytes).
SELECT k.`key`, k.label, k.state, k.fingerprint, k.token, k.attempt, k.taken_over, k.lease_until_ms,
  k.created_at_ms, k.completed_at_ms, k.expires_at_ms, k.status, k.headers, LENGTH(k.body) AS body_bytes,
  IF(:body = 1, k.body, '') AS body, k.encoding, k.storage, c.now_ms
FROM {{table}} k, (SELECT {{clock}} AS now_ms) c
WHERE k.`key` = :key AND k.expires_at_ms > c.now_ms
