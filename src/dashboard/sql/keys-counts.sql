-- keys-counts: the records of one oncely_keys table by state, as of the server's clock, for the dashboard.
-- $1 the inbox's fingerprint, $2 its parked mark (headers as jsonb). A full scan: for operators, never requests.
-- Returns one row, even for an empty table: now_ms, records, in_progress, completed, released, lease_expired
-- (in progress with a lease that ran out), parked. Rows past expires_at_ms do not exist logically (as for get).
WITH clock AS (SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms)
SELECT c.now_ms,
  count(k.key) FILTER (WHERE k.expires_at_ms > c.now_ms) AS records,
  count(k.key) FILTER (WHERE k.expires_at_ms > c.now_ms AND k.state = 'inProgress') AS in_progress,
  count(k.key) FILTER (WHERE k.expires_at_ms > c.now_ms AND k.state = 'completed') AS completed,
  count(k.key) FILTER (WHERE k.expires_at_ms > c.now_ms AND k.state = 'released') AS released,
  count(k.key) FILTER (WHERE k.expires_at_ms > c.now_ms AND k.state = 'inProgress'
                         AND k.lease_until_ms <= c.now_ms) AS lease_expired,
  count(k.key) FILTER (WHERE k.expires_at_ms > c.now_ms AND k.state = 'completed'
                         AND k.fingerprint = $1 AND k.headers = $2::jsonb) AS parked
FROM clock c LEFT JOIN {{table}} k ON true
GROUP BY c.now_ms
