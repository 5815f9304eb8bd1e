-- unused-keys: of the locked key rows :hashes, the ones whose key has no pending row. A plain read on purpose: its
-- snapshot is taken now, after the locks (a locking read in the transaction before takes none), so it holds every
-- row the keys' writers committed; and it locks nothing, where a DELETE's subquery would lock index ranges of the
-- outbox and wait behind writers of other keys. Returns one row per key to forget: key_hash.
SELECT k.key_hash FROM {{keys}} k
WHERE k.key_hash IN (:hashes)
  AND NOT EXISTS (SELECT 1 FROM {{table}} o WHERE o.key_hash = k.key_hash AND o.state = 0)
