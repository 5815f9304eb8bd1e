-- lock-idle-keys: lock the candidates :hashes (idle-keys.sql) that are still idle on their latest version, down the
-- primary key (record locks only), skipping the rows a writer holds right now.
-- Returns one row per locked key: key_hash.
-- Once this transaction holds a key's row, every transaction that wrote the key before has ended (it kept the lock
-- until then), and none can write it until this one ends: unused-keys.sql sees all of the key's rows.
SELECT key_hash FROM {{keys}} FORCE INDEX (PRIMARY)
WHERE key_hash IN (:hashes) AND used_at_ms <= {{now}} - :idle
FOR UPDATE SKIP LOCKED
