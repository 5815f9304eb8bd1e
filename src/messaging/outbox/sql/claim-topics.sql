-- claim-topics: claim.sql for a relay limited to some topics (its `topics` option): lease up to $1 claimable rows
-- of the topics in $4 for $2 ms under claim token $3, in one statement.
-- $1 batch size, $2 lease ms, $3 claim token (uuid), $4 topics (text[], distinct, at least one).
-- Returns the columns claim.sql returns.
--
-- - Only rows of these topics are read, leased or returned: another application's rows in the same table are never
--   touched, whatever their keys.
-- - Order per key is kept among these topics: a row waits for a lower-seq pending row of its key under one of
--   them, not for rows of the key under other topics (another relay's stream; see docs/messaging/relay.md).
-- - Each topic is read through oncely_outbox_pending_topic_seq in seq order and stops at $1 rows, so a relay of a
--   small topic never walks another topic's backlog; the per-topic heads are then merged in seq order. A row a
--   topic's scan locked but the merge left out is unlocked when this statement ends, unclaimed.
WITH candidates AS (
  SELECT h.id FROM unnest($4::text[]) AS t(topic)
  CROSS JOIN LATERAL (
    SELECT o.id, o.seq FROM {{table}} o
    WHERE o.topic = t.topic
      AND o.state = 0
      AND o.available_at <= now()
      AND (o.lease_until IS NULL OR o.lease_until <= now())
      AND (o.key IS NULL OR NOT EXISTS (
        SELECT 1 FROM {{table}} p
        WHERE p.state = 0 AND p.key = o.key AND p.seq < o.seq AND p.topic = ANY($4::text[])))
    ORDER BY o.seq
    LIMIT $1
    FOR UPDATE OF o SKIP LOCKED
  ) AS h
  ORDER BY h.seq
  LIMIT $1
)
UPDATE {{table}} o
SET lease_until = now() + $2 * interval '1 millisecond', leased_by = $3, attempts = o.attempts + 1
WHERE o.id = ANY(ARRAY(SELECT id FROM candidates))
RETURNING o.id::text AS id, o.topic, o.key, o.payload, o.content_type, o.headers, o.attempts, o.created_at
