-- outbox-topics: backlog and lag per topic of the outbox {{table}}, with each topic's oldest pending event (no
-- payload). $1 most topics returned. A scan of the pending and dead rows: for operators, not for a hot path.
-- Returns topic, pending, in_flight, retrying, dead, lag_ms (age of the oldest pending row, 0 when none),
-- oldest_id, oldest_key, oldest_created_ms, oldest_attempts, oldest_error; the biggest backlog first.
WITH per_topic AS (
  SELECT topic,
    count(*) FILTER (WHERE state = 0) AS pending,
    count(*) FILTER (WHERE state = 0 AND lease_until > now()) AS in_flight,
    count(*) FILTER (WHERE state = 0 AND attempts > 0 AND (lease_until IS NULL OR lease_until <= now())) AS retrying,
    count(*) FILTER (WHERE state = 2) AS dead
  FROM {{table}}
  WHERE state IN (0, 2)
  GROUP BY topic
), oldest AS (
  SELECT DISTINCT ON (topic) topic, id::text AS id, key, created_at, attempts, last_error
  FROM {{table}}
  WHERE state = 0
  ORDER BY topic, created_at, id
)
SELECT p.topic, p.pending, p.in_flight, p.retrying, p.dead,
  coalesce(extract(epoch FROM clock_timestamp() - o.created_at) * 1000, 0)::float8 AS lag_ms,
  o.id AS oldest_id, o.key AS oldest_key, (extract(epoch FROM o.created_at) * 1000)::float8 AS oldest_created_ms,
  o.attempts AS oldest_attempts, o.last_error AS oldest_error
FROM per_topic p LEFT JOIN oldest o USING (topic)
ORDER BY p.pending DESC, p.dead DESC, p.topic
LIMIT $1
