--[[
  release-1: give a claimed key up (its outcome is not to be kept), if the token is still the current claim.
  The record stays, in state 'r', until its end, so the next claim's token keeps rising and its attempt counts.

  KEYS[1]  the record (layouts in lib/record.lua)
  ARGV[1]  fencing token of the caller's claim
  ARGV[2]  now in ms since the epoch, or '' to read the server's TIME
  ARGV[3]  channel to PUBLISH 'r' on when a waiter registered; '' publishes nothing

  Returns one of
    5            ok
    6            fenced: no live in-progress record holds this token
    {-1, what}   corrupt: the key holds something that is not a record
]]
--@include record
--@include fence now=ARGV[2]
-- The state byte is patched in place (SETRANGE keeps the TTL), keeping layout 4's waiter mark; a 0.1 HASH is first
-- written in layout 2.
if old then redis.call('SET', KEYS[1], v, 'KEEPTTL') end
redis.call('SETRANGE', KEYS[1], 1, (layout < 4 or layout > 5 or waiters == 0) and 'r' or '\242')
if waiters ~= 0 and ARGV[3] ~= '' then redis.call('PUBLISH', ARGV[3], 'r') end
return 5
