-- claim-lease: the last step of a claim, in the same transaction as claim-lock.sql: lease the locked rows :ids for
-- :lease ms under claim token :token and count the attempt. The transaction commits right after, so no lock
-- outlives the claim and none is held while a broker is called.
-- No rows; the affected-rows count is the number leased.
UPDATE {{table}} FORCE INDEX (PRIMARY)
SET lease_until_ms = {{now}} + :lease, leased_by = :token, attempts = attempts + 1
WHERE id IN (:ids)
