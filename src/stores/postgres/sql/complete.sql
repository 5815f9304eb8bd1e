-- complete: store the outcome if $2 is still the key's current claim (fenced otherwise).
-- $1 key, $2 token, $3 status, $4 headers (JSON array of [name, value]), $5 body, $6 encoding, $7 storage,
-- $8 retention ms, $9 now ms (NULL: the server's clock_timestamp()).
-- Returns one row when the claim was current, none when fenced. {{notify}} wakes waitFor through NOTIFY
-- (delivered at commit) where the store has LISTEN turned on.
--@include clock now=$9
, done AS (
  UPDATE {{table}} k SET
    state = 'completed',
    status = $3::integer,
    headers = $4::jsonb,
    body = $5::bytea,
    encoding = $6,
    storage = $7,
    completed_at_ms = c.now_ms,
    expires_at_ms = c.now_ms + $8::bigint
  FROM clock c
  WHERE k.key = $1 AND k.token = $2::bigint AND k.state = 'inProgress' AND k.expires_at_ms > c.now_ms
  RETURNING k.key
)
SELECT {{notify}} FROM done d
