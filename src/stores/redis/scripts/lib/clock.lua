--[[
  clock (fragment, `--@include clock`, used after `load` of lib/record.lua): clock(arg, key, ends) is the time a
  script decides by, in ms since the epoch.
    - arg ~= '': the store's clock, passed as an argument (tests).
    - otherwise the server's clock. For a key that holds a record, read off the key's TTL: the record says where
      its TTL ends (ends = expires at + keep), so now = ends - PTTL. One integer reply, about half the cost of
      TIME and its two strings. Redis sets and reads TTLs on its own millisecond clock, the one TIME reads, so
      this is the server's time too, give or take the millisecond a script may straddle. If the key has no TTL
      (someone removed it by hand), or there is no record (ends is nil), TIME.
  Scripts are replicated by their effects (Redis >= 5), so reading the time before a write is safe.
]]
local function clock(arg, key, ends)
  if arg ~= '' then return tonumber(arg) end
  if ends then
    local ttl = redis.call('PTTL', key)
    if ttl >= 0 then return ends - ttl end
  end
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
