-- fail: schedule failed rows for a retry after their own delay, or dead-letter those at the attempt limit when the
-- failure is the message's fault ($4: another message of the batch went through, so the broker is up).
-- $1 ids (bigint[]), $2 delays ms (integer[], one per id), $3 errors (text[], one per id), $4 broker up
-- (boolean), $5 max attempts, $6 claim token (uuid).
-- Returns one row per row still held by claim token $6: id (text), state (0 retry, 2 dead), attempts. A row
-- missing from the result was taken over by another relay (fenced).
UPDATE {{table}} o
SET lease_until = NULL, leased_by = NULL, last_error = f.error,
    available_at = now() + f.delay_ms * interval '1 millisecond',
    state = CASE WHEN $4 AND o.attempts >= $5 THEN 2 ELSE 0 END,
    dead_at = CASE WHEN $4 AND o.attempts >= $5 THEN now() END
FROM unnest($1::bigint[], $2::integer[], $3::text[]) AS f(id, delay_ms, error)
WHERE o.id = f.id AND o.leased_by = $6 AND o.state = 0
RETURNING o.id::text AS id, o.state, o.attempts
