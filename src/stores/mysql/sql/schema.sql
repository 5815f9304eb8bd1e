-- The MySQL store's table. sql.ts replaces {{table}} and {{expires_index}} with quoted identifiers (index names
-- are per table in MySQL: the index needs no prefix); idempotent (IF NOT EXISTS), for MySQL 8 and MariaDB 10.5+.
--
-- Times are BIGINT milliseconds since the epoch, like the Store contract, so no conversion can round them.
-- key          the already scoped and hashed storage key, as UTF-8 bytes (VARBINARY: compared byte for byte,
--              whatever the connection's character set and collation)
-- fingerprint  the request's fingerprint, as UTF-8 bytes
-- token        fencing token of the latest claim: GREATEST(previous + 1, now ms), so it rises forever per key
-- taken_over   whether the latest claim took the key over from an owner whose lease ran out
-- renewals     lease renewals of the current claim: every renew changes the row, so its affected-rows count
--              says whether the token matched even when the client does not ask for found rows
-- headers      the kept headers as a UTF-8 JSON array of [name, value] pairs
-- body         outcome bytes exactly as the engine sealed them (already brotli-compressed above 1 KiB)
-- label        what the key belongs to (`POST /payments/:id`, `fn:charge`), UTF-8, from the claim that made the
--              row; NULL when it was given none
CREATE TABLE IF NOT EXISTS {{table}} (
  `key`           VARBINARY(512)  NOT NULL,
  state           VARCHAR(10)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  fingerprint     VARBINARY(1024) NOT NULL,
  token           BIGINT          NOT NULL,
  attempt         INT             NOT NULL,
  taken_over      TINYINT(1)      NOT NULL DEFAULT 0,
  renewals        BIGINT          NOT NULL DEFAULT 0,
  lease_until_ms  BIGINT          NOT NULL,
  created_at_ms   BIGINT          NOT NULL,
  completed_at_ms BIGINT          NULL,
  expires_at_ms   BIGINT          NOT NULL,
  status          INT             NULL,
  headers         MEDIUMBLOB      NULL,
  body            LONGBLOB        NULL,
  encoding        VARCHAR(16)     CHARACTER SET ascii COLLATE ascii_bin NULL,
  storage         VARCHAR(16)     CHARACTER SET ascii COLLATE ascii_bin NULL,
  label           VARBINARY(800)  NULL,
  PRIMARY KEY (`key`),
  -- purge walks this index from the oldest expiry, the inspector from the newest.
  KEY {{expires_index}} (expires_at_ms)
) ENGINE = InnoDB
