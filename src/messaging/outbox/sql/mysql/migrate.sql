-- migrate (MySQL / MariaDB): the outbox table and its key-lock table, created when missing. No parameters; the
-- statements are separated by `;` at a line's end and run one at a time by migrate() under GET_LOCK, so several
-- processes starting at once take turns. Idempotent (IF NOT EXISTS); never drops data. MySQL >= 8.0.4, MariaDB
-- >= 10.6 (FOR UPDATE SKIP LOCKED; tested on MariaDB 10.11).
--
-- Times are BIGINT milliseconds since the epoch from the server's UTC clock, as in the MySQL store: no session time
-- zone or DST step moves them. Text is stored as UTF-8 bytes (VARBINARY/BLOB), compared byte for byte whatever the
-- connection's character set and collation.
--
-- state     0 pending (waiting, in flight or backing off), 1 published (kept until purged), 2 dead letter
-- key_hash  the first 16 bytes of SHA-256 of the key: the per-key order check and the key lock use it (two keys with
--           one hash only wait for each other needlessly, never wrongly); NULL for unordered events
-- seq       the order of a key's rows, which is the order their transactions committed: taken from the key's row
--           in {{keys}} while the writing transaction holds that row's lock (see lock-key.sql); 0 for unordered events
CREATE TABLE IF NOT EXISTS {{table}} (
  id              BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  seq             BIGINT          NOT NULL DEFAULT 0,
  topic           VARBINARY(1024) NOT NULL,
  `key`           BLOB            NULL,
  key_hash        BINARY(16)      NULL,
  payload         LONGBLOB        NOT NULL,
  content_type    VARBINARY(1024) NOT NULL,
  headers         MEDIUMBLOB      NOT NULL,
  state           TINYINT         NOT NULL DEFAULT 0,
  attempts        INT             NOT NULL DEFAULT 0,
  available_at_ms BIGINT          NOT NULL,
  lease_until_ms  BIGINT          NULL,
  leased_by       CHAR(36)        CHARACTER SET ascii COLLATE ascii_bin NULL,
  created_at_ms   BIGINT          NOT NULL,
  published_at_ms BIGINT          NULL,
  dead_at_ms      BIGINT          NULL,
  last_error      BLOB            NULL,
  PRIMARY KEY (id),
  -- The relay's scan (pending rows in id order) and the dead-letter listing (state 2 in id order).
  KEY oncely_outbox_state_id (state, id),
  -- The scan of a relay limited to topics: one topic's pending rows in id order.
  KEY oncely_outbox_state_topic_id (state, topic, id),
  -- "Is a row of this key with a lower seq still pending?": one probe per candidate.
  KEY oncely_outbox_key_order (key_hash, state, seq),
  -- Bounded purge of published rows, oldest first.
  KEY oncely_outbox_published (state, published_at_ms)
) ENGINE = InnoDB;

-- One row per key that has had events: its lock (a writer holds the row's exclusive lock until its transaction
-- ends) and the last seq handed out for it. Rows of keys idle for a while with nothing pending are removed by the
-- relay's housekeeping (purge-keys.sql), so the table holds about as many rows as keys in recent use.
CREATE TABLE IF NOT EXISTS {{keys}} (
  key_hash   BINARY(16) NOT NULL,
  seq        BIGINT     NOT NULL,
  used_at_ms BIGINT     NOT NULL,
  PRIMARY KEY (key_hash),
  KEY oncely_outbox_keys_used (used_at_ms)
) ENGINE = InnoDB;
