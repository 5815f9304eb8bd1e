-- events-read: the latest notable events and the counts since a bucket. $1 most events, $2 first bucket (ms).
-- Returns rows of kind 'event' (at_ms, type, key, detail) and 'count' (at_ms = bucket start, type, n), one
-- statement so both come from one snapshot.
(SELECT 'event' AS kind, at_ms, type, key, detail, 0::bigint AS n FROM {{events}} ORDER BY id DESC LIMIT $1)
UNION ALL
(SELECT 'count', bucket_ms, type, NULL, NULL, count FROM {{counts}} WHERE bucket_ms >= $2)
