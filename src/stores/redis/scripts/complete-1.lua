--[[
  complete-1: store the outcome of a claim, if the token is still the key's current claim.

  KEYS[1]  the record (layout in lib/record.lua)
  ARGV[1]  fencing token of the caller's claim
  ARGV[2]  retentionMs: how long the completed record is replayed
  ARGV[3]  now in ms since the epoch, or '' to read the server's TIME
  ARGV[4]  channel to PUBLISH 'c' on when a waiter registered; '' publishes nothing
  ARGV[5]  the outcome, encoded by the client (status, encoding, storage, headers, body), stored as it is

  Returns one of
    {5}          ok
    {6}          fenced: no live in-progress record holds this token
    {-1, what}   corrupt: the key holds something that is not a record
]]
--@include clock
--@include record
--@include fence now=ARGV[3]
-- An in-progress record is its header and fingerprint, nothing after: the outcome is appended to it as it is
-- and the header patched in place, never the whole value rebuilt in Lua (measured: building a ~300-byte string
-- costs Redis more than the two calls). A 0.1 HASH is first written in layout 2, keeping its TTL.
if #v ~= FIXED + fpLen then return { -1, 'an in-progress record with bytes after its fingerprint' } end
local ends, expires = expiresAt + keep, now + tonumber(ARGV[2])
-- The claim's TTL covers this retention, by no more than the claim's own slack (its lease): the key's expiry is
-- left as it is. Otherwise a TTL of its own, to the new end (and past the token, at least 1 s: lib/record.lua).
local ownTtl = expires > ends or ends - expires > keep
if ownTtl then ends = math.max(expires, token + 1, now + 1000) end
if ends >= U48 then error('oncely: a retention that does not fit the record layout') end
if old then redis.call('SET', KEYS[1], v, 'KEEPTTL') end
if ownTtl then redis.call('PEXPIRE', KEYS[1], ends - now) end
redis.call('SETRANGE', KEYS[1], 0,
  struct.pack(LAYOUT, 2, C, 0, fpLen, attempt, token, leaseUntil, expires, createdAt, now, ends - expires))
redis.call('APPEND', KEYS[1], ARGV[5])
if waiters ~= 0 and ARGV[4] ~= '' then redis.call('PUBLISH', ARGV[4], 'c') end
return { 5 }
