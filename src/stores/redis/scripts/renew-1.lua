--[[
  renew-1: extend the lease of a claim, if the token is still the key's current claim. An owner whose lease ran
  out but whom nobody took over still holds the current token, so it may renew.

  KEYS[1]  the record (layouts in lib/record.lua)
  ARGV[1]  fencing token of the caller's claim
  ARGV[2]  leaseMs: the new lease, counted from now
  ARGV[3]  now in ms since the epoch, or '' to read the server's TIME

  Returns one of
    5            ok
    6            fenced: no live in-progress record holds this token
    {-1, what}   corrupt: the key holds something that is not a record
]]
--@include record
--@include fence now=ARGV[3]
-- The lease field is patched in place (SETRANGE keeps the TTL); a 0.1 HASH is first rewritten in layout 2, keeping
-- its TTL.
local leaseEnd = now + tonumber(ARGV[2])
if leaseEnd >= U48 then error('oncely: a lease end that does not fit the record layout') end
if old then redis.call('SET', KEYS[1], v, 'KEEPTTL') end
if layout == 4 or layout == 5 then
  if leaseEnd - token < 2147483648 then
    redis.call('SETRANGE', KEYS[1], 14, struct.pack('>i4', leaseEnd - token))
    return 5
  end
  -- A lease end past what layout 4 holds: the record is written again, in layout 6, its TTL kept.
  local lbit, kept, tail, more, record = layout % 2, keep, string.sub(v, fpAt + 1), ''
  leaseUntil = leaseEnd
--@include pack
  redis.call('SET', KEYS[1], record, 'KEEPTTL')
  return 5
end
redis.call('SETRANGE', KEYS[1], 15, struct.pack('>I6', leaseEnd))
return 5
