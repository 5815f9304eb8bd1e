--[[
  delete-1: remove the record whatever its state, fencing its owner, and wake anyone waiting on it.

  KEYS[1]  the record (field layout in begin-1.lua)
  ARGV[1]  now in ms since the epoch, or '' to read the server's TIME
  ARGV[2]  channel to PUBLISH 'd' on, waking waiters; '' publishes nothing

  Returns
    1      a live record was removed
    0      there was none (a record past its retention that Redis still held is removed too)
]]
local key = KEYS[1]

local now
if ARGV[1] == '' then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now = tonumber(ARGV[1])
end

local expiresAt = redis.call('HGET', key, 'e')
local live = expiresAt and tonumber(expiresAt) > now
redis.call('DEL', key)
if not live then return 0 end
if ARGV[2] ~= '' then redis.call('PUBLISH', ARGV[2], 'd') end
return 1
