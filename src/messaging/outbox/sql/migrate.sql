-- migrate: create (or upgrade) the transactional outbox (oncely/outbox) in schema {{schema}}. No parameters:
-- several statements in one simple-query message, run by migrate() / `oncely migrate` inside BEGIN … COMMIT.
-- Returns nothing. Idempotent, and one fixed advisory lock makes concurrent migrations (an app starting while
-- `oncely migrate` runs) take turns instead of racing on IF NOT EXISTS.
--
-- state: 0 pending (waiting, in flight or backing off), 1 published (kept until purged), 2 dead letter.
-- seq:   the order of a key's rows, which is the order their transactions committed: each writer takes its key's
--        advisory lock before the row's seq (see insert-one.sql), and the relay publishes a key in seq order (see
--        claim.sql). oncely_outbox_seq must keep CACHE 1 (the default): a cached sequence hands each session a
--        range of its own, and values stop following the order in which they were taken.
SELECT pg_advisory_xact_lock(7466283551001);
CREATE SCHEMA IF NOT EXISTS {{schema}};
SET LOCAL search_path TO {{schema}};

CREATE SEQUENCE IF NOT EXISTS oncely_outbox_seq;
CREATE TABLE IF NOT EXISTS oncely_outbox (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  seq          bigint NOT NULL DEFAULT nextval('oncely_outbox_seq'),
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

DO $$
BEGIN
  -- A table made before seq existed was read in (xid, id) order: number its rows in that order, so the rows
  -- already waiting keep it. Its xid column stays (its default costs nothing: every writer has an xid anyway).
  IF NOT EXISTS (
    SELECT 1 FROM pg_attribute
    WHERE attrelid = 'oncely_outbox'::regclass AND attname = 'seq' AND NOT attisdropped
  ) THEN
    ALTER TABLE oncely_outbox ADD COLUMN seq bigint;
    UPDATE oncely_outbox o SET seq = n.seq
    FROM (SELECT id, nextval('oncely_outbox_seq') AS seq
          FROM (SELECT id FROM oncely_outbox ORDER BY xid, id) AS ordered) AS n
    WHERE o.id = n.id;
    ALTER TABLE oncely_outbox
      ALTER COLUMN seq SET DEFAULT nextval('oncely_outbox_seq'),
      ALTER COLUMN seq SET NOT NULL;
  END IF;
  -- Dropped with the table. Only once: ALTER SEQUENCE would hold writers' nextval until this transaction ends.
  IF NOT EXISTS (
    SELECT 1 FROM pg_depend
    WHERE classid = 'pg_class'::regclass AND objid = 'oncely_outbox_seq'::regclass
      AND refobjid = 'oncely_outbox'::regclass AND deptype = 'a'
  ) THEN
    ALTER SEQUENCE oncely_outbox_seq OWNED BY oncely_outbox.seq;
  END IF;
END $$;

-- The relay's scan: pending rows in seq order.
CREATE INDEX IF NOT EXISTS oncely_outbox_pending_seq ON oncely_outbox (seq) WHERE state = 0;
-- The scan of a relay limited to topics (claim-topics.sql): one topic's pending rows in seq order.
CREATE INDEX IF NOT EXISTS oncely_outbox_pending_topic_seq ON oncely_outbox (topic, seq) WHERE state = 0;
-- "Is a row of this key with a lower seq still pending (waiting, in flight or backing off)?": one probe per
-- candidate.
CREATE INDEX IF NOT EXISTS oncely_outbox_pending_key_seq ON oncely_outbox (key, seq) WHERE state = 0;
-- Bounded purge of published rows, oldest first.
CREATE INDEX IF NOT EXISTS oncely_outbox_published ON oncely_outbox (published_at) WHERE state = 1;
-- Dead-letter listing.
CREATE INDEX IF NOT EXISTS oncely_outbox_dead ON oncely_outbox (id) WHERE state = 2;
-- The (xid, id) indexes of tables made before seq: nothing reads them any more, and each costs every write.
DROP INDEX IF EXISTS oncely_outbox_pending;
DROP INDEX IF EXISTS oncely_outbox_pending_key;
