--[[
  begin-1: claim an idempotency key, or say why not, in one atomic step. A completed key returns its stored
  outcome in the same reply, so a replay costs one round trip.

  KEYS[1]  the record, a HASH at <prefix>:{<key>}
  ARGV[1]  fingerprint of the request
  ARGV[2]  leaseMs: how long the claim holds before another caller may take over
  ARGV[3]  retentionMs: how long the in-progress record is kept (also its physical TTL)
  ARGV[4]  now in ms since the epoch, or '' to read the server's TIME

  Returns one of
    {1, token, attempt, takeover}                                 acquired (takeover is 0 or 1)
    {2, retryAfterMs, attempt}                                    inProgress
    {3}                                                           mismatch
    {4, completedAt, status, headers, body, encoding, storage}    replay (raw field values, body as bytes)
    {-1, field}                                                   corrupt: the record lacks a required field

  Record fields (values are strings; times are ms since the epoch):
    s   state: 'p' in progress, 'c' completed, 'r' released
    f   fingerprint          t   fencing token           a   attempt
    l   lease until          e   expires at (logical)    c   created at
    d   completed at         st  status                  h   headers (JSON array of [name, value])
    b   body bytes (raw)     en  body encoding           sg  body storage
]]
local key = KEYS[1]
local fingerprint = ARGV[1]
local leaseMs = tonumber(ARGV[2])
local retentionMs = tonumber(ARGV[3])

local now
if ARGV[4] == '' then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now = tonumber(ARGV[4])
end

-- Integers up to 2^53 written without an exponent (tostring would use %.14g and lose digits).
local function int(n)
  return string.format('%.0f', n)
end

-- One read for every case, the stored outcome included, so a replay costs a single call inside the script too.
local r = redis.call('HMGET', key, 's', 'f', 't', 'a', 'l', 'e', 'c', 'd', 'st', 'h', 'b', 'en', 'sg')
local state = r[1]
if state then
  for i, name in ipairs({ 's', 'f', 't', 'a', 'l', 'e', 'c' }) do
    if not r[i] then return { -1, name } end
  end
  -- Past its retention the record is gone, whatever Redis has not yet evicted.
  if tonumber(r[6]) <= now then state = false end
end

if not state or state == 'r' then
  -- A fresh claim. After a release the token keeps rising and the attempt is counted; after expiry the token
  -- still follows the clock (max(previous + 1, now)), so it out-ranks every claim handed out before.
  local token = math.max((state and tonumber(r[3]) or 0) + 1, now)
  local attempt = (state and tonumber(r[4]) or 0) + 1
  local createdAt = state and r[7] or int(now)
  -- An expired or released record may still hold an old outcome's fields; a new key has nothing to clear.
  if r[1] then redis.call('DEL', key) end
  redis.call('HSET', key, 's', 'p', 'f', fingerprint, 't', int(token), 'a', int(attempt),
    'l', int(now + leaseMs), 'e', int(now + retentionMs), 'c', createdAt)
  redis.call('PEXPIRE', key, retentionMs)
  return { 1, token, attempt, 0 }
end

if r[2] ~= fingerprint then return { 3 } end

if state == 'c' then return { 4, r[8], r[9], r[10], r[11], r[12], r[13] } end

local leaseUntil = tonumber(r[5])
local attempt = tonumber(r[4])
if leaseUntil > now then return { 2, leaseUntil - now, attempt } end

-- The owner's lease ran out (it crashed or stalled): take over, keeping the fingerprint and raising the token.
local token = math.max(tonumber(r[3]) + 1, now)
redis.call('HSET', key, 't', int(token), 'a', int(attempt + 1), 'l', int(now + leaseMs), 'e', int(now + retentionMs))
redis.call('PEXPIRE', key, retentionMs)
return { 1, token, attempt + 1, 1 }
