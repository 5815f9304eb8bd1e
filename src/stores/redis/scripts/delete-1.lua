--[[
  delete-1: remove the record whatever its state, fencing its owner, and wake anyone waiting on it.

  KEYS[1]  the record (layouts in lib/record.lua)
  ARGV[1]  now in ms since the epoch, or '' to read the server's TIME
  ARGV[2]  channel to PUBLISH 'd' on when a waiter registered; '' publishes nothing

  Returns one of
    1            a live record was removed
    0            there was none (a record past its end that Redis still held is removed too)
    {-1, what}   corrupt: the key holds something that is not a record (left as it is)

  A record whose token the clock has not passed yet (claimed this very millisecond, or tokens ran ahead of the
  clock) leaves a tombstone: state 'r', ending now, fingerprint, label and outcome dropped, token kept, for the few ms
  until the clock passes the token. The next claim then still gets a higher token than the deleted owner's.
]]
--@include record
if not v then return 0 end
--@include clock arg=ARGV[1]
local publish, live = waiters ~= 0, expiresAt > now
if token >= now then
  -- The tombstone: state 'r', waiters 0, ending now; attempt, token, lease end and creation kept, an empty
  -- fingerprint, no label.
  state, waiters, expiresAt, completedAt = R, 0, now, 0
  local lbit, fp, outcome, slack = 0, '\0', '', 0
--@include save
else
  redis.call('DEL', KEYS[1])
end
if publish and ARGV[2] ~= '' then redis.call('PUBLISH', ARGV[2], 'd') end
if live then return 1 end
return 0
