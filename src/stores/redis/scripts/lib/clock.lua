--[[
  clock (fragment, `--@include clock arg=ARGV[n]`, after lib/record.lua): defines now, the time the script
  decides by, in ms since the epoch.
    - ARGV[n] ~= '': the store's clock, passed as an argument (tests).
    - otherwise the server's clock. For a key that holds a record, read off the key's TTL: the record says where
      its TTL ends (expires at + keep), so now = that end - PTTL. One integer reply, about half the cost of TIME
      and its two strings. Redis sets and reads TTLs on its own millisecond clock, the one TIME reads, so this is
      the server's time too, give or take the millisecond a script may straddle. If the key has no TTL (someone
      removed it by hand), or there is no record, TIME.
  Scripts are replicated by their effects (Redis >= 5), so reading the time before a write is safe. Inline code,
  not a function, for the reason lib/record.lua gives.
]]
local now
if @{arg} ~= '' then
  now = tonumber(@{arg})
else
  local ttl = v and redis.call('PTTL', KEYS[1]) or -1
  if ttl >= 0 then
    now = expiresAt + keep - ttl
  else
    local time = redis.call('TIME')
    now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
end
