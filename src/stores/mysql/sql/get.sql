-- get: the record as stored, unless it expired (expired rows wait for purge but no longer exist logically).
-- :key, :now ms (NULL: the server's UTC clock).
SELECT `key`, state, fingerprint, token, attempt, lease_until_ms, created_at_ms, completed_at_ms, expires_at_ms,
  status, headers, body, encoding, storage, label
FROM {{table}}
WHERE `key` = :key AND expires_at_ms > {{clock}}
