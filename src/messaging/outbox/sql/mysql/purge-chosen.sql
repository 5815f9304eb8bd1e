-- purge-chosen: the first step of purging one bounded batch of published rows: up to :batch ids of rows published at
-- least :older ms ago, oldest first, down the (state, published_at_ms) index (named: the optimizer may otherwise
-- take (state, id) and sort every published row). {{topics}} limits it to a relay's topics (an application sharing
-- the table keeps its own retention), or is empty. A plain read: no lock.
-- Returns one row per chosen row: id.
SELECT id FROM {{table}} FORCE INDEX (oncely_outbox_published)
WHERE state = 1 AND published_at_ms <= {{now}} - :older {{topics}}
ORDER BY published_at_ms
LIMIT :batch
