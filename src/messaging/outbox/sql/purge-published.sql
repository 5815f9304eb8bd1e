-- purge-published: remove one bounded batch of published rows, oldest first.
-- $1 older than ms (only rows published at least this long ago), $2 batch size, $3 topics (text[]; NULL: every
-- topic; a relay limited to topics purges only its own, so an application sharing the table keeps its retention).
-- Returns no rows; the row count is the number removed. SKIP LOCKED passes over rows another purge holds, so two
-- purges never wait on each other; each batch is its own short statement (no long lock, no huge DELETE).
WITH doomed AS (
  SELECT id FROM {{table}}
  WHERE state = 1 AND published_at <= now() - $1 * interval '1 millisecond'
    AND ($3::text[] IS NULL OR topic = ANY($3::text[]))
  ORDER BY published_at
  LIMIT $2
  FOR UPDATE SKIP LOCKED
)
DELETE FROM {{table}} o USING doomed d WHERE o.id = d.id
