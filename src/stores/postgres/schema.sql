-- The PostgreSQL store's table. migrate.ts replaces {{schema}}, {{table}} (schema-qualified) and
-- {{expires_index}} with quoted identifiers and runs this under an advisory lock; every statement is idempotent.
--
-- Times are bigint milliseconds since the epoch, like the Store contract, so no conversion can round them.
-- key          the already scoped and hashed storage key (base64url SHA-256 from oncely's key hashing)
-- token        fencing token of the latest claim: max(previous + 1, now ms), so it rises forever per key
-- taken_over   whether the latest claim took the key over from an owner whose lease ran out
-- body         outcome bytes exactly as the engine sealed them (already brotli-compressed above 1 KiB)
-- label        what the key belongs to (`POST /payments/:id`, `fn:charge`), from the claim that made the row;
--              NULL when it was given none (and for rows of versions before labels)
CREATE SCHEMA IF NOT EXISTS {{schema}};

CREATE TABLE IF NOT EXISTS {{table}} (
  key             text    COLLATE "C" NOT NULL PRIMARY KEY,
  state           text    NOT NULL CHECK (state IN ('inProgress', 'completed', 'released')),
  fingerprint     text    NOT NULL,
  token           bigint  NOT NULL,
  attempt         integer NOT NULL,
  taken_over      boolean NOT NULL DEFAULT false,
  lease_until_ms  bigint  NOT NULL,
  created_at_ms   bigint  NOT NULL,
  completed_at_ms bigint,
  expires_at_ms   bigint  NOT NULL,
  status          integer,
  headers         jsonb,
  body            bytea,
  encoding        text,
  storage         text,
  label           text
);

-- Tables made before labels gain the column: nullable, no default, so adding it rewrites nothing. Checked first,
-- so a repeated migrate never takes the ACCESS EXCLUSIVE lock of ALTER TABLE on a busy table.
DO $oncely$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = {{table_literal}}::regclass AND attname = 'label'
                   AND NOT attisdropped) THEN
    ALTER TABLE {{table}} ADD COLUMN IF NOT EXISTS label text;
  END IF;
END
$oncely$;

-- Large bodies arrive compressed already: storing them EXTERNAL skips PostgreSQL's second (futile) compression.
-- Checked first, so a repeated migrate never takes the ACCESS EXCLUSIVE lock of ALTER TABLE on a busy table.
DO $oncely$
BEGIN
  IF (SELECT attstorage FROM pg_attribute WHERE attrelid = {{table_literal}}::regclass AND attname = 'body') <> 'e' THEN
    ALTER TABLE {{table}} ALTER COLUMN body SET STORAGE EXTERNAL;
  END IF;
END
$oncely$;

-- purge walks this index from the oldest expiry, a batch at a time.
CREATE INDEX IF NOT EXISTS {{expires_index}} ON {{table}} (expires_at_ms);
