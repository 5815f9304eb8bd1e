--[[
  complete-1: store the outcome of a claim, if the token is still the key's current claim.

  KEYS[1]  the record (layouts in lib/record.lua)
  ARGV[1]  fencing token of the caller's claim
  ARGV[2]  retentionMs: how long the completed record is replayed
  ARGV[3]  now in ms since the epoch, or '' to read the server's TIME
  ARGV[4]  channel to PUBLISH 'c' on when a waiter registered; '' publishes nothing
  ARGV[5]  the outcome, encoded by the client (status, encoding, storage, headers, body), stored as it is

  Returns one of
    5            ok
    6            fenced: no live in-progress record holds this token
    {-1, what}   corrupt: the key holds something that is not a record
]]
--@include record
--@include fence now=ARGV[3]
-- An in-progress record is its header, fingerprint region and (layouts 3, 5, 7) label region, nothing after. The
-- completed record, label included, is written whole, with one SET: appending the outcome to the value in place
-- (SETRANGE + APPEND) costs Redis a little less, but APPEND leaves the string with room to grow (Redis doubles it),
-- which measured 744 B instead of 424 B for a 200-byte body. SET replaces a 0.1 HASH too.
local size = fpAt + fpLen
if layout % 2 == 1 then size = #v >= size + 2 and size + 2 + struct.unpack('>H', v, size + 1) or -1 end
if #v ~= size then return { -1, 'an in-progress record with bytes after its fingerprint and label' } end
local ends, expires = expiresAt + keep, now + tonumber(ARGV[2])
-- The claim's TTL covers this retention, by no more than the claim's own slack (its lease): the key's expiry is
-- left as it is (KEEPTTL). Otherwise a TTL of its own, to the new end (and past the token, at least 1 s).
local ownTtl = expires > ends or ends - expires > keep
if ownTtl then ends = math.max(expires, token + 1, now + 1000) end
if ends >= U48 then error('oncely: a retention that does not fit the record layout') end
local record
if layout < 4 then
  -- A claim made on a record written before layout 4 completes in its layout, as that version would have.
  record = struct.pack(WIDE, layout, C, 0, fpLen, attempt, token, leaseUntil, expires, createdAt, now, ends - expires)
    .. string.sub(v, FIXED + 1) .. ARGV[5]
else
  local lbit, kept, tail, more = layout % 2, ends - expires, string.sub(v, fpAt + 1), ARGV[5]
  if layout > 5 then tag = string.byte(v, fpAt + 1) end
  local waiters, state, expiresAt, completedAt = 0, C, expires, now
--@include pack
end
if ownTtl then
  redis.call('SET', KEYS[1], record, 'PX', ends - now)
else
  redis.call('SET', KEYS[1], record, 'KEEPTTL')
end
if waiters ~= 0 and ARGV[4] ~= '' then redis.call('PUBLISH', ARGV[4], 'c') end
return 5
