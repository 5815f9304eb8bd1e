--[[
  get-1: the whole record, for inspection, unless it is missing or past its end. Writes nothing.

  KEYS[1]  the record (layout in lib/record.lua)
  ARGV[1]  now in ms since the epoch, or '' to read the server's TIME

  Returns one of
    nil          no live record (none, past its end, or the tombstone of a delete)
    record       the record's bytes (a 0.1 HASH as the layout 2 bytes it stands for)
    {-1, what}   corrupt: the key holds something that is not a record
]]
--@include clock
--@include record
local v, state, waiters, fpLen, attempt, token, leaseUntil, expiresAt, createdAt, completedAt, keep = load(KEYS[1])
if v == nil then return state end
if not v or expiresAt <= clock(ARGV[1], KEYS[1], expiresAt + keep) then return nil end
return v
