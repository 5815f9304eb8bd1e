-- forget-keys: delete the key rows :hashes (unused-keys.sql), still locked by this transaction. A key with a
-- pending row keeps its seq counter, so its next event still sorts after that row; a forgotten key starts again from
-- 1 the next time it is written, which sorts after nothing (no row of it waits).
-- No rows; the affected-rows count is the number removed.
DELETE FROM {{keys}} WHERE key_hash IN (:hashes)
