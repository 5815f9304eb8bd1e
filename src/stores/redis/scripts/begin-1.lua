--[[
  begin-1: claim an idempotency key, or say why not, in one atomic step. A completed key returns its whole record
  in the same reply (the client decodes the outcome from it), so a replay costs one round trip and one GET.

  KEYS[1]  the record, a STRING at <prefix>:{<key>} (layouts in lib/record.lua)
  ARGV[1]  the fingerprint region of the request: a tag byte and the fingerprint as the record keeps it (the
           first 16 characters of a 43-character SHA-256 one, or the fingerprint as it is; lib/record.lua)
  ARGV[2]  leaseMs: how long the claim holds before another caller may take over
  ARGV[3]  retentionMs: how long the in-progress record is kept (the key's TTL adds the lease: see lib/record.lua)
  ARGV[4]  now in ms since the epoch, or '' to read the server's TIME
  ARGV[5]  optional: the label region of a new record, u16 length and the label (lib/record.lua); absent for a
           claim without a label. Written only by a claim that makes a new record: a takeover or a claim after a
           release keeps the label region the record has (none included)

  Returns one of
    token                             acquired, a first attempt (attempt 1, no takeover): most claims
  The two most common answers, a first claim and a replay, are bare values: a table reply costs Redis about
  1,500 instructions per element (bench/redis/instructions.ts).
    {1, token, attempt, takeover}     acquired after a release or a takeover (takeover is 0 or 1)
    {2, retryAfterMs, attempt}        inProgress
    {3}                               mismatch
    record                            replay: the record's bytes, outcome included (a bulk string)
    {-1, what}                        corrupt: the key holds something that is not a record

  Tokens: a new claim gets max(previous + 1, now), previous being the token of whatever the key still holds,
  a record past its end or a tombstone of a delete included. The key lives until the clock has passed its token
  (lib/record.lua), so a claim made after it is gone gets now, above every token the key ever had. Either way no
  token is handed out twice, and a removed owner's complete, renew and release stay fenced.
]]
--@include record
--@include clock arg=ARGV[4]
local fingerprint = ARGV[1]

local takeover = v and expiresAt > now and state ~= R
if takeover then
  if layout > 3 then
    if fpLen ~= #fingerprint or string.sub(v, fpAt + 1, fpAt + fpLen) ~= fingerprint then return { 3 } end
  else
--@include same-fingerprint
    if not same then return { 3 } end
  end
  if state == C then return v end
  if leaseUntil > now then return { 2, leaseUntil - now, attempt } end
  -- The owner's lease ran out (it crashed or stalled): take over, keeping the waiters and the creation time,
  -- counting the attempt and raising the token. The fingerprint is the same; it is written as the claim gives it.
elseif not v then
  -- A fresh claim: no record,
  waiters, token, attempt, createdAt = 0, 0, 0, now
elseif expiresAt <= now then
  -- one past its end (a new key),
  waiters, attempt, createdAt = 0, 0, now
else
  -- or a released one (attempts counted, creation kept).
  waiters = 0
end
local label, lbit = '', 0
if v and expiresAt > now then
  -- A takeover or a claim after a release continues the record: its label, or its lack of one, stays.
  if layout % 2 == 1 then label, lbit = string.sub(v, fpAt + fpLen + 1), 1 end
elseif ARGV[5] then
  label, lbit = ARGV[5], 1
end
token = math.max(token + 1, now)
attempt = attempt + 1
local leaseMs = tonumber(ARGV[2])
state, leaseUntil, expiresAt, completedAt = P, now + leaseMs, now + tonumber(ARGV[3]), 0
local fp, outcome, slack = fingerprint, label, leaseMs
--@include save
if attempt == 1 then return token end
return { 1, token, attempt, takeover and 1 or 0 }
