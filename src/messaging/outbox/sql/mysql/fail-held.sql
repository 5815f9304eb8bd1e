-- fail-held: the first step of settling failed rows, inside a short transaction: lock the rows of :ids that claim
-- token :token still holds, and decide each one's fate: dead-letter it when the failure is the message's fault
-- (:up, another message of the batch went through, so the broker is up) and it reached :max attempts.
-- :ids (inline digits), :token, :up (1 or 0), :max.
-- Returns one row per row still held: id, attempts, dead (1 or 0). A row missing was taken over by another relay
-- (fenced). fail.sql then writes the fate of exactly these rows.
SELECT id, attempts, (:up = 1 AND attempts >= :max) AS dead
FROM {{table}} FORCE INDEX (PRIMARY)
WHERE id IN (:ids) AND leased_by = :token AND state = 0
ORDER BY id
FOR UPDATE
