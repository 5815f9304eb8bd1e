-- mark-published: the broker confirmed these rows; keep them as published (keepPublishedMs > 0).
-- :ids (inline digits), :token the claim token.
-- No rows; the affected-rows count is the number marked. Only rows claim token :token still holds change: a relay
-- whose lease ran out (another relay took the rows over) is fenced off and counts the difference as `fenced`.
UPDATE {{table}} FORCE INDEX (PRIMARY)
SET state = 1, published_at_ms = {{now}}, lease_until_ms = NULL, leased_by = NULL
WHERE id IN (:ids) AND leased_by = :token AND state = 0
