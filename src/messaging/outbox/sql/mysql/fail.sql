-- fail: the second step of settling failed rows, in fail-held.sql's transaction: each held row is retried after its
-- own delay, or becomes a dead letter.
-- :ids the held rows (inline digits), :delays (ms, one per id, in :ids' order), :errors (UTF-8 bytes, one per id),
-- :dead the ids to dead-letter (inline digits; NULL when none). No rows.
-- ELT(FIELD(id, …), …) picks each row's own value out of the lists: MySQL has no unnest() to join them as rows.
UPDATE {{table}} FORCE INDEX (PRIMARY)
SET lease_until_ms = NULL, leased_by = NULL,
    last_error = ELT(FIELD(id, :ids), :errors),
    available_at_ms = {{now}} + CAST(ELT(FIELD(id, :ids), :delays) AS SIGNED),
    state = IF(FIELD(id, :dead) > 0, 2, 0),
    dead_at_ms = IF(FIELD(id, :dead) > 0, {{now}}, NULL)
WHERE id IN (:ids)
