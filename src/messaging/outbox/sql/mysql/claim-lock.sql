-- claim-lock: the second step of a claim, inside the relay's short claim transaction: lock up to :batch of the
-- candidate rows :ids (from claim-heads.sql) that are still claimable on their latest version, skipping rows
-- another relay holds right now.
-- :ids the candidates (inline digits), :batch the batch size.
-- Returns one row per locked row: id, topic, key, payload, content_type, headers, attempts (before this claim),
-- created_at_ms.
--
-- - SKIP LOCKED: relays claiming at the same time split the candidates between them instead of queuing; a row
--   another relay has locked is left to it.
-- - Down the primary key (named: the optimizer would take the (state, id) index, a non-unique one whose locking
--   reads lock gaps too, and so hold up writers inserting new pending rows): equality on a unique key locks the
--   rows found and no gap. Every statement that locks rows by id does the same.
-- - The conditions are checked again on the row's latest version: a row another relay claimed (and committed) since
--   the candidates were read has a lease now, and is passed over.
SELECT id, topic, `key`, payload, content_type, headers, attempts, created_at_ms
FROM {{table}} FORCE INDEX (PRIMARY)
WHERE id IN (:ids)
  AND state = 0
  AND available_at_ms <= {{now}}
  AND (lease_until_ms IS NULL OR lease_until_ms <= {{now}})
ORDER BY id
LIMIT :batch
FOR UPDATE SKIP LOCKED
