-- delete: remove the record whatever its state. $1 key, $2 now ms (NULL: the server's clock_timestamp()).
-- Returns one row when the key had a row (`existed`: it was live, not past its expiry), none otherwise.
-- A new claim's token is greatest(token + 1, now), so a row whose token the clock has passed can go: now alone
-- out-ranks every token the key ever had. A row whose token the clock has NOT passed (claimed this very
-- millisecond, or tokens ran ahead of the clock) is emptied into a tombstone instead: released, expiring now,
-- fingerprint and outcome dropped, token kept, so the next claim still out-ranks its owner; get and stats no
-- longer see it, and purge removes it once the clock has passed the token. The row is locked first, so the
-- choice is made on its latest version even when a claim commits meanwhile.
--@include clock now=$2
, victim AS (
  SELECT k.key, k.token, k.expires_at_ms FROM {{table}} k WHERE k.key = $1 FOR UPDATE
),
removed AS (
  DELETE FROM {{table}} k USING victim v, clock c
  WHERE k.key = v.key AND v.token < c.now_ms
  RETURNING k.key
),
emptied AS (
  UPDATE {{table}} k SET
    state = 'released', fingerprint = '', expires_at_ms = c.now_ms, completed_at_ms = NULL,
    status = NULL, headers = NULL, body = NULL, encoding = NULL, storage = NULL
  FROM victim v, clock c
  WHERE k.key = v.key AND v.token >= c.now_ms
  RETURNING k.key
)
SELECT (d.expires_at_ms > c.now_ms) AS existed, {{notify}} FROM victim d, clock c
