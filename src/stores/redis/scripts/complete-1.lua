--[[
  complete-1: store the outcome of a claim, if the token is still the key's current claim.

  KEYS[1]  the record (field layout in begin-1.lua)
  ARGV[1]  fencing token of the caller's claim
  ARGV[2]  retentionMs: how long the completed record is replayed (also its physical TTL)
  ARGV[3]  now in ms since the epoch, or '' to read the server's TIME
  ARGV[4]  channel to PUBLISH 'c' on, waking waiters; '' publishes nothing
  ARGV[5]  status          ARGV[6]  headers (JSON array of [name, value])
  ARGV[7]  body bytes      ARGV[8]  encoding         ARGV[9]  storage

  Returns one of
    {5}    ok
    {6}    fenced: no live in-progress record holds this token
]]
local key = KEYS[1]
local retentionMs = tonumber(ARGV[2])

local now
if ARGV[3] == '' then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now = tonumber(ARGV[3])
end

local function int(n)
  return string.format('%.0f', n)
end

local r = redis.call('HMGET', key, 's', 't', 'e')
if r[1] ~= 'p' or tonumber(r[2]) ~= tonumber(ARGV[1]) or not r[3] or tonumber(r[3]) <= now then
  return { 6 }
end

redis.call('HSET', key, 's', 'c', 'd', int(now), 'e', int(now + retentionMs),
  'st', ARGV[5], 'h', ARGV[6], 'b', ARGV[7], 'en', ARGV[8], 'sg', ARGV[9])
redis.call('PEXPIRE', key, retentionMs)
if ARGV[4] ~= '' then redis.call('PUBLISH', ARGV[4], 'c') end
return { 5 }
