-- dead-letters: the latest dead letters of the outbox {{table}}, without their payloads (they may hold personal
-- data). $1 most rows. Returns id (text), topic, key, attempts, created_ms, dead_ms, last_error; latest first.
SELECT id::text AS id, topic, key, attempts, (extract(epoch FROM created_at) * 1000)::float8 AS created_ms,
  (extract(epoch FROM dead_at) * 1000)::float8 AS dead_ms, last_error
FROM {{table}}
WHERE state = 2
ORDER BY dead_at DESC, id DESC
LIMIT $1
