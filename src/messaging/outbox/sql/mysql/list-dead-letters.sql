-- list-dead-letters: one page of dead letters in id order, down the (state, id) index (named: the optimizer may
-- otherwise take (state, published_at_ms) and sort).
-- :after (inline digits: ids greater than this, 0 for the first page), :topic (UTF-8 bytes; NULL: any), :limit.
-- Returns one row per dead letter: id, topic, key, payload, content_type, headers, attempts, created_at_ms,
-- dead_at_ms, last_error.
SELECT id, topic, `key`, payload, content_type, headers, attempts, created_at_ms, dead_at_ms, last_error
FROM {{table}} FORCE INDEX (oncely_outbox_state_id)
WHERE state = 2 AND id > :after AND (:topic IS NULL OR topic = :topic)
ORDER BY id
LIMIT :limit
