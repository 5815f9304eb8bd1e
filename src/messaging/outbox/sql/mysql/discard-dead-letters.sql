-- discard-dead-letters: delete the chosen dead letters :ids (dead-chosen.sql; inline digits) for good, by primary
-- key, those still dead. No rows; the affected-rows count is the number removed.
DELETE o FROM {{table}} AS o FORCE INDEX (PRIMARY)
WHERE o.id IN (:ids) AND o.state = 2
