-- dead-chosen: the first step of a replay or a discard: a plain read (no lock) of up to :batch dead letters down the
-- (state, id) index, each key's in its old seq order (so rows of one key replayed over several rounds keep their
-- order too). :all (1: every dead letter, 0: only :ids), :ids (inline digits; NULL when
-- :all), :topic (UTF-8 bytes; NULL: any). Returns one row per chosen row: id.
-- Rows are then locked or deleted by primary key (record locks only): a locking scan of the (state, id) index
-- would lock the gap before the first dead letter too, where writers insert new pending rows.
SELECT id FROM {{table}} FORCE INDEX (oncely_outbox_state_id)
WHERE state = 2 AND (:all = 1 OR id IN (:ids)) AND (:topic IS NULL OR topic = :topic)
ORDER BY key_hash, seq, id
LIMIT :batch
