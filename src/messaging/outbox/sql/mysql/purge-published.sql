-- purge-published: the second step: delete the chosen published rows :ids (inline digits) by primary key, each a
-- record lock only, in one short statement of its own (no long lock, no huge DELETE; InnoDB's purge thread
-- reclaims the space in the background, no VACUUM). A published row never changes again, so no transaction needs to
-- span both steps: rows another purge removed in between are simply not counted.
-- No rows; the affected-rows count is the number removed.
DELETE o FROM {{table}} AS o FORCE INDEX (PRIMARY) WHERE o.id IN (:ids) AND o.state = 1
