-- stats: counts by state for `oncely stats`. :now ms (NULL: the server's UTC clock), :table (the table's name, for
-- its size in information_schema). A full scan: for operators, not for the request path. `records` includes
-- expired rows not yet purged.
SELECT COUNT(*) AS records,
  COALESCE(SUM(k.expires_at_ms > c.now_ms AND k.state = 'inProgress'), 0) AS in_progress,
  COALESCE(SUM(k.expires_at_ms > c.now_ms AND k.state = 'completed'), 0) AS completed,
  COALESCE(SUM(k.expires_at_ms > c.now_ms AND k.state = 'released'), 0) AS released,
  (SELECT COALESCE(t.data_length + t.index_length, 0) FROM information_schema.TABLES t
    WHERE t.table_schema = DATABASE() AND t.table_name = :table) AS bytes
FROM {{table}} k, (SELECT {{clock}} AS now_ms) c
