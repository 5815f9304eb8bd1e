-- renew: extend the lease if $2 is still the key's current claim.
-- $1 key, $2 token, $3 lease ms, $4 now ms (NULL: the server's clock_timestamp()). One row when renewed.
--@include clock now=$4
UPDATE {{table}} k SET lease_until_ms = c.now_ms + $3::bigint
FROM clock c
WHERE k.key = $1 AND k.token = $2::bigint AND k.state = 'inProgress' AND k.expires_at_ms > c.now_ms
RETURNING k.token
