--[[
  clock (fragment, `--@include clock`): clock(arg) is the time a script decides by, in ms since the epoch: the
  store's clock when the caller passed one as an argument (tests), or the server's TIME when arg is ''.
  Scripts are replicated by their effects (Redis >= 5), so reading TIME before a write is safe.
]]
local function clock(arg)
  if arg ~= '' then return tonumber(arg) end
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
