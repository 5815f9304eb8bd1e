--[[
  release-1: give a claimed key up (its outcome is not to be kept), if the token is still the current claim.
  The record stays, in state 'r', until its retention ends, so the next claim's token keeps rising.

  KEYS[1]  the record (field layout in begin-1.lua)
  ARGV[1]  fencing token of the caller's claim
  ARGV[2]  now in ms since the epoch, or '' to read the server's TIME
  ARGV[3]  channel to PUBLISH 'r' on, waking waiters; '' publishes nothing

  Returns one of
    {5}    ok
    {6}    fenced: no live in-progress record holds this token
]]
local key = KEYS[1]

local now
if ARGV[2] == '' then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now = tonumber(ARGV[2])
end

local r = redis.call('HMGET', key, 's', 't', 'e')
if r[1] ~= 'p' or tonumber(r[2]) ~= tonumber(ARGV[1]) or not r[3] or tonumber(r[3]) <= now then
  return { 6 }
end

redis.call('HSET', key, 's', 'r')
if ARGV[3] ~= '' then redis.call('PUBLISH', ARGV[3], 'r') end
return { 5 }
