-- stats: counts by state for `oncely stats`. :now ms (NULL: the server's UTC clock), :table (the table's name, for
-- its size in information_schema). A full scan: for operators, not for the request path. `records` includes
-- expired rows not yet purged. The sums are cast back to whole numbers: SUM answers DECIMAL, which some clients hand
-- over as objects (Prisma's Decimal) rather than numbers or strings.
SELECT COUNT(*) AS records,
  CAST(COALESCE(SUM(k.expires_at_ms > c.now_ms AND k.state = 'inProgress'), 0) AS SIGNED) AS in_progress,
  CAST(COALESCE(SUM(k.expires_at_ms > c.now_ms AND k.state = 'completed'), 0) AS SIGNED) AS completed,
  CAST(COALESCE(SUM(k.expires_at_ms > c.now_ms AND k.state = 'released'), 0) AS SIGNED) AS released,
  (SELECT CAST(COALESCE(t.data_length + t.index_length, 0) AS SIGNED) FROM information_schema.TABLES t
    WHERE t.table_schema = DATABASE() AND t.table_name = :table) AS bytes
FROM {{table}} k, (SELECT {{clock}} AS now_ms) c
