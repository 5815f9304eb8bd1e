-- claim: lease up to $1 claimable rows for $2 ms under claim token $3, in one statement (its own short
-- transaction: no lock outlives it, so none is held while a broker is called).
-- $1 batch size, $2 lease ms, $3 claim token (uuid).
-- Returns one row per claimed row: id (text), topic, key, payload (bytea), content_type, headers (jsonb),
-- attempts (counting this claim), created_at.
--
-- - Order per key: a row is claimable only if no other pending row of its key has a lower seq. A row in flight or
--   backing off is still pending, so it holds back its own key and nothing else.
-- - That head is final. Within a key, seq order is commit order (insert-one.sql): a row of the key with a lower
--   seq belongs to a transaction that ended before this row's transaction took the key's lock, so it is visible
--   here if it committed; and every row the key gets later sorts after this one. No horizon is needed: a
--   transaction still open delays only its own rows (and, through its lock, the writers of its keys).
-- - SKIP LOCKED: relays claiming at the same time split the heads between them instead of queuing.
WITH candidates AS (
  SELECT o.id FROM {{table}} o
  WHERE o.state = 0
    AND o.available_at <= now()
    AND (o.lease_until IS NULL OR o.lease_until <= now())
    AND (o.key IS NULL OR NOT EXISTS (
      SELECT 1 FROM {{table}} p WHERE p.state = 0 AND p.key = o.key AND p.seq < o.seq))
  ORDER BY o.seq
  LIMIT $1
  FOR UPDATE OF o SKIP LOCKED
)
UPDATE {{table}} o
SET lease_until = now() + $2 * interval '1 millisecond', leased_by = $3, attempts = o.attempts + 1
WHERE o.id = ANY(ARRAY(SELECT id FROM candidates))
RETURNING o.id::text AS id, o.topic, o.key, o.payload, o.content_type, o.headers, o.attempts, o.created_at
