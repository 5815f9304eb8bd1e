-- delete-published: the broker confirmed these rows; remove them at once (keepPublishedMs = 0: one write per row
-- instead of two).
-- $1 ids (bigint[]), $2 claim token (uuid).
-- Returns no rows; the row count is the number removed. Fenced by the claim token as in mark-published.sql.
DELETE FROM {{table}}
WHERE id = ANY($1::bigint[]) AND leased_by = $2 AND state = 0
