-- begin: claim the key, or say why not, in ONE statement (no check-then-act).
-- $1 key, $2 fingerprint, $3 lease ms, $4 retention ms, $5 now ms (NULL: the server's clock_timestamp()),
-- $6 label (NULL: none), written only by a claim that makes the row or one past its end: a takeover or a claim
-- after a release keeps the row's label.
-- Returns at most one row (outcome, token, attempt, retry_after_ms, completed_at_ms, status, headers, body,
-- encoding, storage) where outcome is one of:
--   acquired | takeover   the caller owns the key (inserted, or reclaimed: expired, released, lease over)
--   inProgress | mismatch | replay   read from the statement's snapshot; nothing was written or locked
--   stale                 the snapshot is older than the row that decided (a concurrent writer committed while
--                         this statement ran): run it again. No row at all means the same.
-- The INSERT takes no row lock when the key exists (DO NOTHING), and the UPDATE locks only a row it reclaims,
-- so replays and conflicts never queue behind each other, in autocommit or inside a transaction.
--@include clock now=$5
, seen AS (
  SELECT k.* FROM {{table}} k WHERE k.key = $1
),
inserted AS (
  INSERT INTO {{table}} AS k
    (key, state, fingerprint, token, attempt, taken_over, lease_until_ms, created_at_ms, expires_at_ms, label)
  SELECT $1, 'inProgress', $2, c.now_ms, 1, false, c.now_ms + $3::bigint, c.now_ms, c.now_ms + $4::bigint,
    $6::text
  FROM clock c
  ON CONFLICT (key) DO NOTHING
  RETURNING k.token, k.attempt, k.taken_over
),
reclaimed AS (
  UPDATE {{table}} k SET
    state = 'inProgress',
    fingerprint = $2,
    token = greatest(k.token + 1, c.now_ms),
    attempt = CASE WHEN k.expires_at_ms <= c.now_ms THEN 1 ELSE k.attempt + 1 END,
    taken_over = (k.state = 'inProgress' AND k.expires_at_ms > c.now_ms),
    lease_until_ms = c.now_ms + $3::bigint,
    created_at_ms = CASE WHEN k.expires_at_ms <= c.now_ms THEN c.now_ms ELSE k.created_at_ms END,
    label = CASE WHEN k.expires_at_ms <= c.now_ms THEN $6::text ELSE k.label END,
    completed_at_ms = NULL,
    expires_at_ms = c.now_ms + $4::bigint,
    status = NULL, headers = NULL, body = NULL, encoding = NULL, storage = NULL
  FROM clock c
  WHERE k.key = $1
    AND (k.expires_at_ms <= c.now_ms
      OR k.state = 'released'
      OR (k.state = 'inProgress' AND k.fingerprint = $2 AND k.lease_until_ms <= c.now_ms))
  RETURNING k.token, k.attempt, k.taken_over
),
claimed AS (
  SELECT * FROM inserted UNION ALL SELECT * FROM reclaimed
)
SELECT CASE WHEN taken_over THEN 'takeover' ELSE 'acquired' END AS outcome, token, attempt,
  NULL::bigint AS retry_after_ms, NULL::bigint AS completed_at_ms, NULL::integer AS status,
  NULL::text AS headers, NULL::bytea AS body, NULL::text AS encoding, NULL::text AS storage
FROM claimed
UNION ALL
SELECT CASE
    WHEN s.expires_at_ms <= c.now_ms OR s.state = 'released' THEN 'stale'
    WHEN s.fingerprint <> $2 THEN 'mismatch'
    WHEN s.state = 'completed' THEN 'replay'
    WHEN s.lease_until_ms > c.now_ms THEN 'inProgress'
    ELSE 'stale'
  END,
  s.token, s.attempt, s.lease_until_ms - c.now_ms, s.completed_at_ms,
  s.status, s.headers::text, s.body, s.encoding, s.storage
FROM seen s, clock c
WHERE NOT EXISTS (SELECT 1 FROM claimed)
