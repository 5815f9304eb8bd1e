-- delete-published: the broker confirmed these rows; remove them at once (keepPublishedMs = 0: one write per row
-- instead of two). :ids (inline digits), :token the claim token.
-- No rows; the affected-rows count is the number removed. Fenced by the claim token as in mark-published.sql.
-- The multi-table form, because MySQL takes an index hint (the primary key, see claim-lock.sql) only there.
DELETE o FROM {{table}} AS o FORCE INDEX (PRIMARY)
WHERE o.id IN (:ids) AND o.leased_by = :token AND o.state = 0
