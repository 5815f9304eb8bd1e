--[[
  save (fragment, `--@include save`, after lib/record.lua and lib/clock.lua): writes a whole record to KEYS[1]
  (SET replaces a 0.1 HASH too), for the scripts that write one (begin, delete). The record is the one the locals
  lbit, state, waiters, fp (its fingerprint region, tagged as lib/record.lua says), attempt, token, leaseUntil,
  expiresAt, createdAt, completedAt and outcome (whatever follows the fingerprint: a claim's label region) describe,
  in layout 4 or 6 (lib/pack.lua); its TTL runs to max(expiresAt, token + 1, now + 1 s) plus slack (a claim's
  lease; 0 otherwise). Inline code, not a function, for the reason lib/record.lua gives.
]]
do
  local ends = math.max(expiresAt, token + 1, now + 1000) + slack
  local kept = math.min(ends - expiresAt, 4294967295)
  if math.max(token, leaseUntil, expiresAt, createdAt, completedAt) >= U48 or attempt >= 4294967296
    or #fp > 65535 then
    error('oncely: a time, token, attempt or fingerprint does not fit the record layout')
  end
  local tag, fpLen, tail, more, record = string.byte(fp), #fp, fp, outcome
--@include pack
  redis.call('SET', KEYS[1], record, 'PX', expiresAt + kept - now)
end
