--[[
  begin-1: claim an idempotency key, or say why not, in one atomic step. A completed key returns its whole record
  in the same reply (the client decodes the outcome from it), so a replay costs one round trip and one GET.

  KEYS[1]  the record, a STRING at <prefix>:{<key>} (layout in lib/record.lua)
  ARGV[1]  fingerprint of the request (at most 65,535 bytes)
  ARGV[2]  leaseMs: how long the claim holds before another caller may take over
  ARGV[3]  retentionMs: how long the in-progress record is kept (the key's TTL adds the lease: see lib/record.lua)
  ARGV[4]  now in ms since the epoch, or '' to read the server's TIME

  Returns one of
    {1, token, attempt, takeover}     acquired (takeover is 0 or 1)
    {2, retryAfterMs, attempt}        inProgress
    {3}                               mismatch
    {4, record}                       replay: the record's bytes, outcome included
    {-1, what}                        corrupt: the key holds something that is not a record

  Tokens: a new claim gets max(previous + 1, now), previous being the token of whatever the key still holds,
  a record past its end or a tombstone of a delete included. The key lives until the clock has passed its token
  (lib/record.lua), so a claim made after it is gone gets now, above every token the key ever had. Either way no
  token is handed out twice, and a removed owner's complete, renew and release stay fenced.
]]
--@include clock
--@include record
--@include save
local key = KEYS[1]
local fingerprint = ARGV[1]

local v, state, waiters, fpLen, attempt, token, leaseUntil, expiresAt, createdAt, completedAt, keep = load(key)
if v == nil then return state end
local now = clock(ARGV[4], key, v and expiresAt + keep)

if v and expiresAt > now and state ~= R then
  if fpLen ~= #fingerprint or string.sub(v, FIXED + 1, FIXED + fpLen) ~= fingerprint then return { 3 } end
  if state == C then return { 4, v } end
  if leaseUntil > now then return { 2, leaseUntil - now, attempt } end
  -- The owner's lease ran out (it crashed or stalled): take over, keeping the fingerprint, the waiters and the
  -- creation time, counting the attempt and raising the token.
  token = math.max(token + 1, now)
  local leaseMs = tonumber(ARGV[2])
  save(key, now, P, waiters, fingerprint, attempt + 1, token, now + leaseMs, now + tonumber(ARGV[3]), createdAt, 0,
    '', leaseMs)
  return { 1, token, attempt + 1, 1 }
end

-- A fresh claim: no record, a released one (attempts counted, creation kept) or one past its end (a new key).
if not v then
  token, attempt, createdAt = 0, 0, now
elseif expiresAt <= now then
  attempt, createdAt = 0, now
end
token = math.max(token + 1, now)
local leaseMs = tonumber(ARGV[2])
save(key, now, P, 0, fingerprint, attempt + 1, token, now + leaseMs, now + tonumber(ARGV[3]), createdAt, 0, '',
  leaseMs)
return { 1, token, attempt + 1, 0 }
