-- The transactional outbox (oncely/outbox). Applied by migrate() / `oncely migrate` with search_path set to the
-- target schema, inside one transaction holding an advisory lock, so concurrent migrations are safe.
--
-- state: 0 pending (waiting, in flight or backing off), 1 published (kept until purged), 2 dead letter.
-- xid:   the writing transaction's id. The relay only reads rows with xid below the oldest running transaction
--        (pg_snapshot_xmin), so the set of rows it can see never grows "behind" it: see docs/messaging/relay.md.
CREATE TABLE IF NOT EXISTS oncely_outbox (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  xid          xid8 NOT NULL DEFAULT pg_current_xact_id(),
  topic        text NOT NULL,
  key          text,
  payload      bytea NOT NULL,
  content_type text NOT NULL,
  headers      jsonb NOT NULL DEFAULT '{}'::jsonb,
  state        smallint NOT NULL DEFAULT 0,
  attempts     integer NOT NULL DEFAULT 0,
  available_at timestamptz NOT NULL DEFAULT now(),
  lease_until  timestamptz,
  leased_by    uuid,
  created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
  published_at timestamptz,
  dead_at      timestamptz,
  last_error   text
) WITH (fillfactor = 80);

-- The relay's scan: pending rows in (xid, id) order.
CREATE INDEX IF NOT EXISTS oncely_outbox_pending ON oncely_outbox (xid, id) WHERE state = 0;
-- "Is there an earlier pending row of this key, or one in flight?": one probe per candidate.
CREATE INDEX IF NOT EXISTS oncely_outbox_pending_key ON oncely_outbox (key, xid, id) WHERE state = 0;
-- Bounded purge of published rows, oldest first.
CREATE INDEX IF NOT EXISTS oncely_outbox_published ON oncely_outbox (published_at) WHERE state = 1;
-- Dead-letter listing.
CREATE INDEX IF NOT EXISTS oncely_outbox_dead ON oncely_outbox (id) WHERE state = 2;
