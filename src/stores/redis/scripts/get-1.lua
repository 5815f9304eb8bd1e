--[[
  get-1: the whole record, for inspection, unless it is missing or past its end. Writes nothing.

  KEYS[1]  the record (layouts in lib/record.lua)
  ARGV[1]  now in ms since the epoch, or '' to read the server's TIME

  Returns one of
    nil          no live record (none, past its end, or the tombstone of a delete)
    record       the record's bytes (a 0.1 HASH as the layout 2 bytes it stands for)
    {-1, what}   corrupt: the key holds something that is not a record
]]
--@include record
if not v then return nil end
--@include clock arg=ARGV[1]
if expiresAt <= now then return nil end
return v
