-- purge: delete one bounded batch of expired rows, oldest expiry first down the expiry index. :batch rows at
-- most, :now ms (NULL: the server's UTC clock). The affected-rows count is the number removed.
-- A row whose token the clock has not passed yet stays (see delete.sql): the next claim must still out-rank it.
-- Each batch is its own short statement: no long lock, no huge DELETE.
DELETE FROM {{table}}
WHERE expires_at_ms <= {{clock}} AND token < {{clock}}
ORDER BY expires_at_ms
LIMIT :batch
