-- release: give the key up if $2 is still its current claim, so any later request may claim it again.
-- $1 key, $2 token, $3 now ms (NULL: the server's clock_timestamp()). One row when released, none when fenced.
--@include clock now=$3
, done AS (
  UPDATE {{table}} k SET state = 'released'
  FROM clock c
  WHERE k.key = $1 AND k.token = $2::bigint AND k.state = 'inProgress' AND k.expires_at_ms > c.now_ms
  RETURNING k.key
)
SELECT {{notify}} FROM done d
