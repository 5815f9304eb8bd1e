-- key-seqs: the last seq each key in :hashes handed out, read in the transaction that holds their locks
-- (lock-key.sql). Returns one row per key: key_hash, seq.
SELECT key_hash, seq FROM {{keys}} WHERE key_hash IN (:hashes)
