-- stats: counts by state for `oncely stats` and dashboards. A full scan: not for a hot path.
-- $1 topics (text[]; NULL: every topic): the counts of a relay limited to topics.
-- Returns one row: pending, in_flight, retrying, published, dead (bigint counts), oldest_ms (age of the oldest
-- pending row), max_attempts (among pending rows), oldest_tx_ms (how long the oldest running transaction that
-- holds a transaction id has been open, cluster-wide; 0 when none).
SELECT
  count(*) FILTER (WHERE state = 0) AS pending,
  count(*) FILTER (WHERE state = 0 AND lease_until > now()) AS in_flight,
  count(*) FILTER (WHERE state = 0 AND attempts > 0 AND (lease_until IS NULL OR lease_until <= now())) AS retrying,
  count(*) FILTER (WHERE state = 1) AS published,
  count(*) FILTER (WHERE state = 2) AS dead,
  coalesce(extract(epoch FROM clock_timestamp() - min(created_at) FILTER (WHERE state = 0)) * 1000, 0) AS oldest_ms,
  coalesce(max(attempts) FILTER (WHERE state = 0), 0) AS max_attempts,
  (SELECT coalesce(extract(epoch FROM clock_timestamp() - min(xact_start)) * 1000, 0)
     FROM pg_stat_activity WHERE backend_xid IS NOT NULL) AS oldest_tx_ms
FROM {{table}}
WHERE $1::text[] IS NULL OR topic = ANY($1::text[])
