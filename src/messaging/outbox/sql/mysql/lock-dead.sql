-- lock-dead: the second step of a replay, inside its transaction: lock the chosen dead letters :ids
-- (dead-chosen.sql; inline digits) that are still dead, by primary key, each key's in its old seq order.
-- Returns one row per locked row: id, key_hash (NULL: unordered). The replay then takes each key's lock with
-- lock-key.sql (count: its rows here), reads the key's new seqs (key-seqs.sql) and renumbers (replay.sql).
SELECT id, key_hash FROM {{table}} FORCE INDEX (PRIMARY)
WHERE id IN (:ids) AND state = 2
ORDER BY key_hash, seq, id
FOR UPDATE
