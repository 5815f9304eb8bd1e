-- events-schema: the event log's two tables in schema {{schema}}, created by EventLog#migrate() (and the demo).
-- Idempotent. Times are ms since the epoch by the writing application's clock (events happen there).
-- {{events}}  notable events (takeover, fenced, leaseLost, storeError), the latest kept, older ones trimmed
-- {{counts}}  how many events of each type per bucket (bucket_ms is the bucket's start), for the rate charts
CREATE SCHEMA IF NOT EXISTS {{schema}};
CREATE TABLE IF NOT EXISTS {{events}} (
  id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at_ms   bigint NOT NULL,
  type    text NOT NULL,
  key     text,
  detail  text NOT NULL
);
CREATE TABLE IF NOT EXISTS {{counts}} (
  bucket_ms bigint NOT NULL,
  type      text NOT NULL,
  count     bigint NOT NULL,
  PRIMARY KEY (bucket_ms, type)
);
