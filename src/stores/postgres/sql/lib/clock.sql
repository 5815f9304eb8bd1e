-- clock (fragment, included by every statement as `--@include clock now=$N`): opens the statement's WITH with
-- the one time it decides by, in ms since the epoch: @{now} when the store has a clock (tests), else the server's
-- clock_timestamp(). Every comparison of a lease, an expiry or a token with the time reads c.now_ms from here.
WITH clock AS (
  SELECT coalesce(@{now}::bigint, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) AS now_ms
)
