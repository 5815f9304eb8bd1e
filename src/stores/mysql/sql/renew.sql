-- renew: extend the lease if :token is still the key's current claim.
-- :key, :token, :lease ms, :now ms (NULL: the server's UTC clock). One affected row when renewed: `renewals`
-- changes every time, so a renewal to the same deadline (the same millisecond) still counts as a changed row.
UPDATE {{table}} SET lease_until_ms = {{clock}} + :lease, renewals = renewals + 1
WHERE `key` = :key AND token = :token AND state = 'inProgress' AND expires_at_ms > {{clock}}
