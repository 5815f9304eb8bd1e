-- stats: counts by state for `oncely stats` and dashboards. A full scan: not for a hot path. {{topics}} limits the
-- counts to a relay's topics, or is empty.
-- Returns one row: pending, in_flight, retrying, published, dead (counts), oldest_ms (age of the oldest pending
-- row), max_attempts (among pending rows).
SELECT
  COALESCE(SUM(o.state = 0), 0) AS pending,
  COALESCE(SUM(o.state = 0 AND o.lease_until_ms > c.now_ms), 0) AS in_flight,
  COALESCE(SUM(o.state = 0 AND o.attempts > 0 AND (o.lease_until_ms IS NULL OR o.lease_until_ms <= c.now_ms)), 0)
    AS retrying,
  COALESCE(SUM(o.state = 1), 0) AS published,
  COALESCE(SUM(o.state = 2), 0) AS dead,
  COALESCE(MAX(c.now_ms) - MIN(CASE WHEN o.state = 0 THEN o.created_at_ms END), 0) AS oldest_ms,
  COALESCE(MAX(CASE WHEN o.state = 0 THEN o.attempts END), 0) AS max_attempts
FROM (SELECT {{now}} AS now_ms) c
LEFT JOIN {{table}} o ON 1 = 1 {{topics}}
