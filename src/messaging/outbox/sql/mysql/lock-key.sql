-- lock-key: take an ordering key's lock in the caller's transaction and hand out its next :count seqs.
-- :hash key hash (16 bytes), :count events of this key the transaction is about to write (at least 1).
-- No rows; the OK packet's in-transaction flag tells the writer whether it runs inside a transaction (writer.ts).
--
-- Commit order per key, as insert-one.sql gives it on PostgreSQL: the upsert takes the key row's exclusive lock
-- (an index-record lock on the primary key: writers of other keys never wait for it), which the transaction keeps
-- until it commits or rolls back. So transactions writing one key go one at a time from here on, and each takes
-- seqs above every seq a transaction that held the lock before it took: within a key, seq order is commit order.
-- A transaction that rolls back gives its seqs back with its rows; the next writer takes them again.
INSERT INTO {{keys}} (key_hash, seq, used_at_ms)
VALUES (:hash, :count, {{now}})
ON DUPLICATE KEY UPDATE seq = seq + :count, used_at_ms = {{now}}
