--[[
  watch-1: whether the key is held in progress right now, for a waiter that has subscribed to its channel (and
  on each polling tick). When it is, the record's waiters byte is set, so the transition that ends the claim
  (complete, release, delete) PUBLISHes; a record nobody waits on is never published about.

  KEYS[1]  the record (layouts in lib/record.lua)
  ARGV[1]  now in ms since the epoch, or '' to read the server's TIME

  Returns one of
    1            a live in-progress record (now marked as waited on)
    0            completed, released, missing or past its end
    {-1, what}   corrupt: the key holds something that is not a record
]]
--@include record
if not v or state ~= P then return 0 end
--@include clock arg=ARGV[1]
if expiresAt <= now then return 0 end
-- The mark, patched in place (SETRANGE keeps the TTL): layout 4's state byte, the waiters byte of the others. A 0.1
-- HASH is left alone: it counts as waited on.
if waiters == 0 then
  if layout == 4 or layout == 5 then
    redis.call('SETRANGE', KEYS[1], 1, '\240')
  else
    redis.call('SETRANGE', KEYS[1], 2, '\1')
  end
end
return 1
