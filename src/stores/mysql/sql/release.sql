-- release: give the key up if :token is still its current claim, so any later request may claim it again.
-- :key, :token, :now ms (NULL: the server's UTC clock). One affected row when released, none when fenced.
UPDATE {{table}} SET state = 'released'
WHERE `key` = :key AND token = :token AND state = 'inProgress' AND expires_at_ms > {{clock}}
