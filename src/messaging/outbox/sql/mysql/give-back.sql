-- give-back: hand claimed rows back untouched (shutdown, or too close to the lease's end to start a publish); the
-- attempt the claim counted is taken back. :ids (inline digits), :token the claim token.
-- No rows; the affected-rows count is the number handed back (fenced by the claim token as in mark-published.sql).
UPDATE {{table}} FORCE INDEX (PRIMARY)
SET lease_until_ms = NULL, leased_by = NULL, attempts = GREATEST(attempts - 1, 0)
WHERE id IN (:ids) AND leased_by = :token AND state = 0
