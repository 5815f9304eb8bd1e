--[[
  renew-1: extend the lease of a claim, if the token is still the key's current claim. An owner whose lease ran
  out but whom nobody took over still holds the current token, so it may renew.

  KEYS[1]  the record (field layout in begin-1.lua)
  ARGV[1]  fencing token of the caller's claim
  ARGV[2]  leaseMs: the new lease, counted from now
  ARGV[3]  now in ms since the epoch, or '' to read the server's TIME

  Returns one of
    {5}    ok
    {6}    fenced: no live in-progress record holds this token
]]
local key = KEYS[1]

local now
if ARGV[3] == '' then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now = tonumber(ARGV[3])
end

local r = redis.call('HMGET', key, 's', 't', 'e')
if r[1] ~= 'p' or tonumber(r[2]) ~= tonumber(ARGV[1]) or not r[3] or tonumber(r[3]) <= now then
  return { 6 }
end

redis.call('HSET', key, 'l', string.format('%.0f', now + tonumber(ARGV[2])))
return { 5 }
