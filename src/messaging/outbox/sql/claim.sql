-- claim: lease up to $1 claimable rows for $2 ms under claim token $3, in one statement (its own short
-- transaction: no lock outlives it, so none is held while a broker is called).
-- $1 batch size, $2 lease ms, $3 claim token (uuid).
-- Returns one row per claimed row: id (text), topic, key, payload (bytea), content_type, headers (jsonb),
-- attempts (counting this claim), created_at.
--
-- - Horizon: only rows written by transactions older than every running one (xid below the snapshot's xmin).
--   Those rows are final: no running or future transaction can add a row that sorts before them in
--   (xid, id) order, so claiming in that order never passes over a row that commits later.
-- - Order per key: a row is claimable only if no other pending row of its key sorts before it. A row in flight
--   or backing off is still pending, so it holds back its own key and nothing else. (A replayed dead letter gets
--   a fresh xid, so it queues behind its key's pending rows instead of overtaking one in flight.)
-- - SKIP LOCKED: relays claiming at the same time split the heads between them instead of queuing.
WITH candidates AS (
  SELECT o.id FROM {{table}} o
  WHERE o.state = 0
    AND o.xid < pg_snapshot_xmin(pg_current_snapshot())
    AND o.available_at <= now()
    AND (o.lease_until IS NULL OR o.lease_until <= now())
    AND (o.key IS NULL OR NOT EXISTS (
      SELECT 1 FROM {{table}} p
      WHERE p.state = 0 AND p.key = o.key AND (p.xid, p.id) < (o.xid, o.id)))
  ORDER BY o.xid, o.id
  LIMIT $1
  FOR UPDATE OF o SKIP LOCKED
)
UPDATE {{table}} o
SET lease_until = now() + $2 * interval '1 millisecond', leased_by = $3, attempts = o.attempts + 1
WHERE o.id = ANY(ARRAY(SELECT id FROM candidates))
RETURNING o.id::text AS id, o.topic, o.key, o.payload, o.content_type, o.headers, o.attempts, o.created_at
