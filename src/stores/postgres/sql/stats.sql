-- stats: counts by state for `oncely stats`. $1 now ms (NULL: clock_timestamp()). A full scan: for operators,
-- not for the request path. `records` includes expired rows not yet purged.
--@include clock now=$1
SELECT count(*) AS records,
  count(*) FILTER (WHERE k.expires_at_ms > c.now_ms AND k.state = 'inProgress') AS in_progress,
  count(*) FILTER (WHERE k.expires_at_ms > c.now_ms AND k.state = 'completed') AS completed,
  count(*) FILTER (WHERE k.expires_at_ms > c.now_ms AND k.state = 'released') AS released,
  pg_total_relation_size({{table_literal}}::regclass) AS bytes
FROM {{table}} k, clock c
