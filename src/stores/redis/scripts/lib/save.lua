--[[
  save (fragment, `--@include save`, after lib/record.lua): save(...) writes a whole record, for the scripts that
  write one (begin, delete). A function defined at the top of a script is made anew on every call of that script,
  so the scripts that never write a whole record do not define it.
]]
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
