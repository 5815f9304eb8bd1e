-- idle-keys: the first step of removing the key rows of keys nobody writes any more: a plain read (no lock) of up to
-- :batch rows of {{keys}} unused for :idle ms, oldest first. Returns one row per candidate: key_hash.
-- The rest happens in one short transaction: lock-idle-keys.sql, unused-keys.sql, forget-keys.sql.
SELECT key_hash FROM {{keys}}
WHERE used_at_ms <= {{now}} - :idle
ORDER BY used_at_ms
LIMIT :batch
