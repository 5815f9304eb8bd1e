-- mark-published: the broker confirmed these rows; keep them as published (keepPublishedMs > 0).
-- $1 ids (bigint[]), $2 claim token (uuid).
-- Returns no rows; the row count is the number marked. Only rows claim token $2 still holds change: a relay whose
-- lease ran out (another relay took the rows over) is fenced off and counts the difference as `fenced`.
UPDATE {{table}}
SET state = 1, published_at = now(), lease_until = NULL, leased_by = NULL
WHERE id = ANY($1::bigint[]) AND leased_by = $2 AND state = 0
