--[[
  delete-1: remove the record whatever its state, fencing its owner, and wake anyone waiting on it.

  KEYS[1]  the record (layout in lib/record.lua)
  ARGV[1]  now in ms since the epoch, or '' to read the server's TIME
  ARGV[2]  channel to PUBLISH 'd' on when a waiter registered; '' publishes nothing

  Returns one of
    1            a live record was removed
    0            there was none (a record past its end that Redis still held is removed too)
    {-1, what}   corrupt: the key holds something that is not a record (left as it is)

  A record whose token the clock has not passed yet (claimed this very millisecond, or tokens ran ahead of the
  clock) leaves a tombstone: state 'r', ending now, fingerprint and outcome dropped, token kept, for the few ms
  until the clock passes the token. The next claim then still gets a higher token than the deleted owner's.
]]
--@include clock
--@include record
--@include save
local key = KEYS[1]
local v, state, waiters, fpLen, attempt, token, leaseUntil, expiresAt, createdAt, completedAt, keep = load(key)
if v == nil then return state end
if not v then return 0 end
local now = clock(ARGV[1], key, expiresAt + keep)
if token >= now then
  save(key, now, R, 0, '', attempt, token, leaseUntil, now, createdAt, 0, '', 0)
else
  redis.call('DEL', key)
end
if waiters ~= 0 and ARGV[2] ~= '' then redis.call('PUBLISH', ARGV[2], 'd') end
if expiresAt > now then return 1 end
return 0
