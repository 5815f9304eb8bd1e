-- claim-heads: the first step of a claim, a plain (consistent) read that takes no lock: up to :scan ids of rows a
-- relay may publish now, in id order. {{topics}} limits them (and the order check) to a relay's topics, or is empty.
-- :scan candidates (more than a batch, so relays claiming at once can skip each other's rows). {{scan_index}} is the
-- (state, id) index, or (state, topic, id) for a relay limited to topics: left to itself the optimizer may walk
-- the primary key in id order through every published and dead row kept before the first pending one.
-- Returns one row per candidate: id.
--
-- - Order per key: a row is a candidate only if no other pending row of its key has a lower seq. A row in flight or
--   backing off is still pending, so it holds back its own key and nothing else.
-- - That head is final, and it is decided on one snapshot: a row of the key with a lower seq belongs to a
--   transaction that ended before this row's writer took the key's lock (lock-key.sql), so it committed before
--   this row did, and this statement's snapshot holds it if it holds this row. The check must not be a locking
--   read: InnoDB's locking reads see rows committed after the snapshot, so a row could be seen while a lower one of
--   its key, committed just before it, is not. Hence two steps: heads on a snapshot here, then claim-lock.sql locks
--   them and checks each row again on its latest version.
SELECT o.id FROM {{table}} o FORCE INDEX ({{scan_index}})
WHERE o.state = 0
  {{topics}}
  AND o.available_at_ms <= {{now}}
  AND (o.lease_until_ms IS NULL OR o.lease_until_ms <= {{now}})
  AND (o.key_hash IS NULL OR NOT EXISTS (
    SELECT 1 FROM {{table}} p
    WHERE p.key_hash = o.key_hash AND p.state = 0 AND p.seq < o.seq {{probe_topics}}))
ORDER BY o.id
LIMIT :scan
