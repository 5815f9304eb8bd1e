-- list-dead-letters: one page of dead letters in id order.
-- $1 after (bigint: ids greater than this, '0' for the first page), $2 topic (NULL: any), $3 page size.
-- Returns one row per dead letter: id (text), topic, key, payload (bytea), content_type, headers (jsonb),
-- attempts, created_at, dead_at, last_error.
SELECT id::text AS id, topic, key, payload, content_type, headers, attempts, created_at, dead_at, last_error
FROM {{table}}
WHERE state = 2 AND id > $1::bigint AND ($2::text IS NULL OR topic = $2)
ORDER BY id
LIMIT $3
