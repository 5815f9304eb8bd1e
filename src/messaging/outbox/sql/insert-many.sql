-- insert-many: write several events in one statement, in array order.
-- $1 topics (text[]), $2 keys (text[], NULL elements: unordered), $3 payloads (bytea[]), $4 content types
-- (text[]), $5 headers (jsonb[]); element i of each array is event i.
-- Returns one row: ids (text[], the outbox ids in array order). {{notify}} as in insert-one.sql.
WITH inserted AS (
  INSERT INTO {{table}} (topic, key, payload, content_type, headers)
  SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[], $4::text[], $5::jsonb[])
  RETURNING id
)
SELECT array_agg(id::text ORDER BY id) AS ids{{notify}} FROM inserted
