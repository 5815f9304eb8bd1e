-- insert-one: write one event with the caller's client (inside the caller's transaction).
-- $1 topic, $2 key (NULL: unordered), $3 payload (bytea), $4 content type, $5 headers (JSON object as text).
-- Returns one row: id (the outbox id, as text). {{notify}} adds a pg_notify that wakes idle relays at commit
-- (empty when the writer was made with notify: false).
--
-- Commit order per key: the row's seq is taken only once the transaction holds its key's advisory lock, which
-- it keeps until it commits or rolls back. So transactions writing one key go one at a time from here on, and a
-- higher seq belongs to a transaction that took the lock after every lower one had ended: within a key, seq
-- order is commit order. The lock lives in a space of this table's own (hashtext of its name) under
-- hashtext(key); two keys with one hash wait for each other needlessly, never wrongly. A NULL key locks nothing.
WITH locked AS (
  SELECT count(pg_advisory_xact_lock(hashtext({{table_literal}}), hashtext($2::text))) AS keys
  WHERE $2::text IS NOT NULL
),
inserted AS (
  INSERT INTO {{table}} (topic, key, payload, content_type, headers)
  SELECT $1::text, $2::text, $3::bytea, $4::text, $5::jsonb FROM locked
  RETURNING id
)
SELECT id::text AS id{{notify}} FROM inserted
