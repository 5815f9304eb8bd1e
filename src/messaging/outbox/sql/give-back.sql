-- give-back: hand claimed rows back untouched (shutdown, or too close to the lease's end to start a publish);
-- the attempt the claim counted is taken back.
-- $1 ids (bigint[]), $2 claim token (uuid).
-- Returns no rows; the row count is the number handed back (fenced by the claim token as in mark-published.sql).
UPDATE {{table}}
SET lease_until = NULL, leased_by = NULL, attempts = greatest(attempts - 1, 0)
WHERE id = ANY($1::bigint[]) AND leased_by = $2 AND state = 0
