--[[
  legacy (fragment, `--@include legacy`, inside lib/record.lua's read): legacy(key) reads a record of oncely 0.1
  as the layout 2 string it stands for. Included where the read meets a key that is not a STRING, so only a call
  that meets such a key defines the function: a function defined at the top of a script is made anew on every
  call (about 2,000 of Redis' instructions each, bench/redis/instructions.ts), and its tables are built inside
  for the same reason.
]]
-- oncely 0.1 kept a record as a HASH (s f t a l e c d st h b en sg). It is read as the layout 2 string it stands
-- for, never rewritten by a read: a 0.1 instance still running (a rolling upgrade) keeps working on it until a
-- transition of this version writes the key. Waiters are taken to be 1: 0.1 waiters expect a PUBLISH.
local function legacy(key)
  local LEGACY_FIELDS = { 's', 'f', 't', 'a', 'l', 'e', 'c', 'd', 'st', 'h', 'b', 'en', 'sg' }
  local LEGACY_STATES = { p = P, c = C, r = R }
  local LEGACY_ENCODINGS = { identity = 0, gzip = 1, br = 2 }
  local LEGACY_STORAGES = { inline = 0, blob = 16, omitted = 32 }
  local h = redis.pcall('HMGET', key, unpack(LEGACY_FIELDS))
  if h.err then return { -1, 'a key of another type' } end
  for i = 1, 7 do
    if not h[i] then return { -1, 'a 0.1 HASH without its ' .. LEGACY_FIELDS[i] .. ' field' } end
  end
  local state = LEGACY_STATES[h[1]]
  if not state then return { -1, 'a 0.1 HASH with an unknown state' } end
  for i = 3, 7 do
    if not tonumber(h[i]) then return { -1, 'a 0.1 HASH whose ' .. LEGACY_FIELDS[i] .. ' is not a number' } end
  end
  local completedAt, outcome = 0, ''
  if state == C then
    for i = 8, 13 do
      if not h[i] then return { -1, 'a 0.1 HASH without its ' .. LEGACY_FIELDS[i] .. ' field' } end
    end
    local status, encoding, storage = tonumber(h[9]), LEGACY_ENCODINGS[h[12]], LEGACY_STORAGES[h[13]]
    if not tonumber(h[8]) then return { -1, 'a 0.1 HASH whose d is not a number' } end
    if not status or status < 0 or status > 65535 then return { -1, 'a 0.1 HASH with a bad status' } end
    if not encoding then return { -1, 'a 0.1 HASH with an unknown encoding' } end
    if not storage then return { -1, 'a 0.1 HASH with an unknown storage' } end
    local ok, list = pcall(cjson.decode, h[10])
    if not ok or type(list) ~= 'table' or #list > 254 then
      return { -1, 'a 0.1 HASH with unreadable headers' }
    end
    -- Headers as literals: a count byte, then per name and value 0x80 + length (or 0xff and a u32 length).
    local parts = { struct.pack('>HBB', status, encoding + storage, #list) }
    for _, pair in ipairs(list) do
      for j = 1, 2 do
        local s = type(pair) == 'table' and pair[j]
        if type(s) ~= 'string' then return { -1, 'a 0.1 HASH with unreadable headers' } end
        parts[#parts + 1] = #s < 127 and string.char(128 + #s) or struct.pack('>BI4', 255, #s)
        parts[#parts + 1] = s
      end
    end
    parts[#parts + 1] = h[11]
    completedAt, outcome = tonumber(h[8]), table.concat(parts)
  end
  -- keep 0: 0.1 set the key's TTL to the record's logical end.
  return struct.pack(WIDE, 2, state, 1, #h[2], tonumber(h[4]), tonumber(h[3]), tonumber(h[5]), tonumber(h[6]),
    tonumber(h[7]), completedAt, 0) .. h[2] .. outcome
end
