--[[
  record (fragment, `--@include record`): layout 2 of a record, ONE STRING per key at <prefix>:{<key>}, read with
  one GET, written whole with one SET (… PX, or … KEEPTTL when a complete keeps the claim's TTL) by a claim, a
  complete and a delete's tombstone, and patched in place with SETRANGE (release, renew, the waiter mark).

  Bytes, big-endian, times in ms since the epoch:
     0  u8   layout: 2 (oncely 0.1 wrote a HASH instead, read below as if it were this layout)
     1  u8   state: 'p' in progress, 'c' completed, 'r' released
     2  u8   waiters: 1 once a waitFor registered on the key (watch-1.lua); only then do complete, release and
             delete PUBLISH, so nobody pays for pub/sub while nobody waits
     3  u16  F: length of the fingerprint in bytes
     5  u32  attempt
     9  u48  fencing token
    15  u48  lease until
    21  u48  expires at: the record's logical end
    27  u48  created at
    33  u48  completed at (0 unless completed)
    39  u32  keep: how long the key outlives its logical end; its TTL runs to expires at + keep
    43  F    fingerprint
  43+F  …    outcome of a completed record: written by the client, handed back to it as it is, never read here
             (status, encoding, storage, headers, body; see src/stores/redis/record.ts)

  The TTL (save below) runs to max(expires at, token + 1, now + 1 s), plus a claim's lease: past its logical end a
  record is gone for every script, but while the clock has not passed its token the key stays, so the next claim
  (max(token + 1, now)) out-ranks it; the second keeps a tombstone alive when a test clock lags real time (Redis'
  own expiry clock); the lease lets a complete within it keep the TTL (no PEXPIRE, no change to the expiry
  table) when its retention is not longer than the claim's. Since expires at + keep is where the TTL ends, the
  scripts read the server time off the TTL (lib/clock.lua).

  Defines: P, C, R (state bytes), FIXED (43), LAYOUT, U48, load(key), save(...).
]]
local LAYOUT = '>BBBHI4I6I6I6I6I6I4'
local FIXED = 43
local P, C, R = 112, 99, 114
local U48 = 281474976710656

-- oncely 0.1 kept a record as a HASH (s f t a l e c d st h b en sg). It is read as the layout 2 string it stands
-- for, never rewritten by a read: a 0.1 instance still running (a rolling upgrade) keeps working on it until a
-- transition of this version writes the key. Waiters are taken to be 1: 0.1 waiters expect a PUBLISH.
-- (Its tables are built inside, so scripts pay for them only when they meet such a record.)
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
  return struct.pack(LAYOUT, 2, state, 1, #h[2], tonumber(h[4]), tonumber(h[3]), tonumber(h[5]), tonumber(h[6]),
    tonumber(h[7]), completedAt, 0) .. h[2] .. outcome
end

-- The record at key: its bytes and fixed fields, then whether it is a 0.1 HASH; false when the key holds
-- nothing; nil and the reply to return ({-1, what}) when it holds something that is not a record.
local function load(key)
  local v = redis.pcall('GET', key)
  local old = false
  if type(v) == 'table' then
    v, old = legacy(key), true
    if type(v) == 'table' then return nil, v end
  end
  if not v then return false end
  if #v < FIXED or string.byte(v, 1) ~= 2 then return nil, { -1, 'a string that is not a layout 2 record' } end
  local _, state, waiters, fpLen, attempt, token, leaseUntil, expiresAt, createdAt, completedAt, keep =
    struct.unpack(LAYOUT, v)
  if #v < FIXED + fpLen or (state ~= P and state ~= C and state ~= R) then
    return nil, { -1, 'a malformed layout 2 record' }
  end
  return v, state, waiters, fpLen, attempt, token, leaseUntil, expiresAt, createdAt, completedAt, keep, old
end

-- Writes a whole record (SET replaces a 0.1 HASH too) with its TTL: to max(expiresAt, token + 1, now + 1 s),
-- plus slack (a claim's lease; 0 otherwise). The fingerprint fp is given as it is stored.
local function save(key, now, state, waiters, fp, attempt, token, leaseUntil, expiresAt, createdAt, completedAt,
                    outcome, slack)
  local ends = math.max(expiresAt, token + 1, now + 1000) + slack
  local keep = math.min(ends - expiresAt, 4294967295)
  if math.max(token, leaseUntil, expiresAt, createdAt, completedAt) >= U48 or attempt >= 4294967296
    or #fp > 65535 then
    error('oncely: a time, token, attempt or fingerprint does not fit the record layout')
  end
  redis.call('SET', key,
    struct.pack(LAYOUT, 2, state, waiters, #fp, attempt, token, leaseUntil, expiresAt, createdAt, completedAt, keep)
      .. fp .. outcome,
    'PX', expiresAt + keep - now)
end
