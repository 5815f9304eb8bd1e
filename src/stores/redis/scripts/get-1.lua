--[[
  get-1: the whole record, for inspection, unless it is missing or past its retention.

  KEYS[1]  the record (field layout in begin-1.lua)
  ARGV[1]  now in ms since the epoch, or '' to read the server's TIME

  Returns one of
    nil                                                          no live record
    {s, f, t, a, l, c, d, e, st, h, b, en, sg}                   raw field values (missing ones as nil)
]]
local key = KEYS[1]

local now
if ARGV[1] == '' then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now = tonumber(ARGV[1])
end

local r = redis.call('HMGET', key, 's', 'f', 't', 'a', 'l', 'c', 'd', 'e', 'st', 'h', 'b', 'en', 'sg')
if not r[1] or not r[8] or tonumber(r[8]) <= now then return nil end
return r
