-- discard-dead-letters: delete dead letters for good.
-- $1 ids (bigint[]; NULL: every dead letter), $2 topic (text; NULL: any).
-- Returns no rows; the row count is the number removed.
DELETE FROM {{table}}
WHERE state = 2 AND ($1::bigint[] IS NULL OR id = ANY($1::bigint[])) AND ($2::text IS NULL OR topic = $2)
