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
local fp = string.sub(v, FIXED + 1, FIXED + fpLen)
local ends, expires = expiresAt + keep, now + tonumber(ARGV[2])
if expires <= ends and ends - expires <= keep and not old then
  -- The claim's TTL covers this retention, by no more than the claim's own slack (its lease): the value is
  -- replaced, the key's expiry left as it is. A much shorter retention gets a TTL of its own instead.
  redis.call('SET', KEYS[1],
    struct.pack(LAYOUT, 2, C, 0, fpLen, attempt, token, leaseUntil, expires, createdAt, now, ends - expires)
      .. fp .. ARGV[5],
    'KEEPTTL')
else
  save(KEYS[1], now, C, 0, fp, attempt, token, leaseUntil, expires, createdAt, now, ARGV[5], 0)
end
if waiters ~= 0 and ARGV[4] ~= '' then redis.call('PUBLISH', ARGV[4], 'c') end
return { 5 }
