--[[
  pending-1: whether the key is held in progress right now (what a waiter checks after subscribing, and on each
  polling tick). Read only.

  KEYS[1]  the record (field layout in begin-1.lua)
  ARGV[1]  now in ms since the epoch, or '' to read the server's TIME

  Returns
    1      a live in-progress record
    0      completed, released, missing or past its retention
]]
local key = KEYS[1]

local now
if ARGV[1] == '' then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now = tonumber(ARGV[1])
end

local r = redis.call('HMGET', key, 's', 'e')
if r[1] == 'p' and r[2] and tonumber(r[2]) > now then return 1 end
return 0
