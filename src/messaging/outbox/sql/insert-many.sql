-- insert-many: write several events in one statement, in array order.
-- $1 topics (text[]), $2 keys (text[], NULL elements: unordered), $3 payloads (bytea[]), $4 content types
-- (text[]), $5 headers (jsonb[]); element i of each array is event i.
-- Returns one row: ids (text[], the outbox ids in array order). {{notify}} as in insert-one.sql.
-- Takes the advisory lock of every distinct key first (as insert-one.sql does for one), in hash order, so two
-- writers of overlapping key sets wait for each other instead of deadlocking; then the rows' seqs, in array order.
WITH locked AS (
  SELECT count(pg_advisory_xact_lock(hashtext({{table_literal}}), h)) AS keys
  FROM (SELECT DISTINCT hashtext(k) AS h FROM unnest($2::text[]) AS k WHERE k IS NOT NULL ORDER BY h) AS hashes
),
inserted AS (
  INSERT INTO {{table}} (topic, key, payload, content_type, headers)
  SELECT e.topic, e.key, e.payload, e.content_type, e.headers
  FROM locked, unnest($1::text[], $2::text[], $3::bytea[], $4::text[], $5::jsonb[]) WITH ORDINALITY
    AS e(topic, key, payload, content_type, headers, n)
  ORDER BY e.n
  RETURNING id
)
SELECT array_agg(id::text ORDER BY id) AS ids{{notify}} FROM inserted
