-- replay-dead-letters: put dead letters back in line with a fresh attempt count, due now.
-- $1 ids (bigint[]; NULL: every dead letter), $2 topic (text; NULL: any).
-- Returns one row: count (integer, the rows replayed). {{notify}} wakes idle relays at commit.
-- Each row gets a new seq taken under its key's advisory lock, as a writer's (insert-one.sql), so it queues behind
-- its key's pending rows instead of overtaking one in flight; rows replayed together keep their old order.
WITH chosen AS (
  SELECT id, key, seq FROM {{table}}
  WHERE state = 2 AND ($1::bigint[] IS NULL OR id = ANY($1::bigint[])) AND ($2::text IS NULL OR topic = $2)
  FOR UPDATE
),
locked AS (
  SELECT count(pg_advisory_xact_lock(hashtext({{table_literal}}), h)) AS keys
  FROM (SELECT DISTINCT hashtext(key) AS h FROM chosen WHERE key IS NOT NULL ORDER BY h) AS hashes
),
renumbered AS (
  SELECT id, nextval({{sequence_literal}}) AS seq
  FROM (SELECT c.id FROM chosen c, locked ORDER BY c.seq) AS ordered
),
replayed AS (
  UPDATE {{table}} o
  SET state = 0, attempts = 0, available_at = now(), dead_at = NULL, lease_until = NULL, leased_by = NULL,
      seq = r.seq
  FROM renumbered r
  WHERE o.id = r.id
  RETURNING 1
)
SELECT count(*)::int AS count{{notify}} FROM replayed
