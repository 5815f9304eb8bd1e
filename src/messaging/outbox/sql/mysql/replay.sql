-- replay: the last step of a replay, in its transaction: put the chosen dead letters :ids back in line with a fresh
-- attempt count, due now, each with its new seq from :seqs (one per id, in :ids' order; 0 for an unordered row).
-- The new seqs were taken under the keys' locks, as a writer's (lock-key.sql), so each row queues behind its key's
-- pending rows instead of overtaking one in flight, and rows replayed together keep their old order. No rows.
UPDATE {{table}} FORCE INDEX (PRIMARY)
SET state = 0, attempts = 0, available_at_ms = {{now}}, dead_at_ms = NULL, lease_until_ms = NULL,
    leased_by = NULL, seq = CAST(ELT(FIELD(id, :ids), :seqs) AS SIGNED)
WHERE id IN (:ids)
