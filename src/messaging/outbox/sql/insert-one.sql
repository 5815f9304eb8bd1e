-- insert-one: write one event with the caller's client (inside the caller's transaction).
-- $1 topic, $2 key (NULL: unordered), $3 payload (bytea), $4 content type, $5 headers (JSON object as text).
-- Returns one row: id (the outbox id, as text). {{notify}} adds a pg_notify that wakes idle relays at commit
-- (empty when the writer was made with notify: false).
WITH inserted AS (
  INSERT INTO {{table}} (topic, key, payload, content_type, headers)
  VALUES ($1, $2, $3, $4, $5)
  RETURNING id
)
SELECT id::text AS id{{notify}} FROM inserted
