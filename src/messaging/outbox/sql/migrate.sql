-- migrate: create the transactional outbox (oncely/outbox) in schema {{schema}}. No parameters: several
-- statements in one simple-query message, run by migrate() / `oncely migrate` inside BEGIN … COMMIT.
-- Returns nothing. Idempotent: every statement is IF NOT EXISTS, and one fixed advisory lock makes concurrent
-- migrations (an app starting while `oncely migrate` runs) take turns instead of racing on them.
--
-- state: 0 pending (waiting, in flight or backing off), 1 published (kept until purged), 2 dead letter.
-- xid:   the writing transaction's id. The relay only reads rows with xid below the oldest running transaction
--        (pg_snapshot_xmin), so the set of rows it can see never grows "behind" it (see claim.sql).
SELECT pg_advisory_xact_lock(7466283551001);
CREATE SCHEMA IF NOT EXISTS {{schema}};
SET LOCAL search_path TO {{schema}};

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
