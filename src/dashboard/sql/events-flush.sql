-- events-flush: one flush of an EventLog, one statement. $1 at_ms[], $2 type[], $3 key[], $4 detail[] (the
-- notable events), $5 bucket_ms[], $6 type[], $7 count[] (counts to add), $8 the oldest bucket to keep, $9 how
-- many notable events to keep. Returns nothing. The trim sees the table as it was before this statement, so the
-- log holds at most $9 plus one flush's worth of rows.
WITH added AS (
  INSERT INTO {{events}} (at_ms, type, key, detail)
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[])
), counted AS (
  INSERT INTO {{counts}} (bucket_ms, type, count)
  SELECT * FROM unnest($5::bigint[], $6::text[], $7::bigint[]) AS u(bucket_ms, type, count)
  -- A bucket older than the one the DELETE below keeps would be touched twice by this statement (an error).
  WHERE u.bucket_ms >= $8
  ON CONFLICT (bucket_ms, type) DO UPDATE SET count = {{counts}}.count + excluded.count
), old_counts AS (
  DELETE FROM {{counts}} WHERE bucket_ms < $8
)
DELETE FROM {{events}} WHERE id <= (SELECT max(id) - $9 FROM {{events}})
