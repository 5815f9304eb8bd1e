-- insert: write one event with the caller's connection, inside the caller's transaction, after lock-key.sql took
-- its key's lock (for an ordered event).
-- :topic, :key (NULL: unordered), :hash (NULL with :key), :back (how many seqs the key handed out after this
-- event's: 0 for the last event of its key in one add, see writer.ts), :payload, :type (content type),
-- :headers (a JSON object, UTF-8). No rows; the insert id is the outbox id.
INSERT INTO {{table}}
  (topic, `key`, key_hash, seq, payload, content_type, headers, available_at_ms, created_at_ms)
VALUES (
  :topic, :key, :hash,
  COALESCE((SELECT k.seq FROM {{keys}} k WHERE k.key_hash = :hash), 0) - :back,
  :payload, :type, :headers, {{now}}, {{now}})
