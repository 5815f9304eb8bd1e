--[[
  fence (fragment, `--@include fence now=ARGV[n]`, after clock and record): the preamble of complete, release
  and renew. Reads the time and the record, and returns {6} (fenced) unless ARGV[1], the caller's token, is the
  current claim of a live in-progress record. Past that point the locals now, v, state, waiters, fpLen,
  attempt, token, leaseUntil, expiresAt, createdAt, completedAt, keep and old (a 0.1 HASH) describe the caller's
  claim.
]]
local now = clock(@{now})
local v, state, waiters, fpLen, attempt, token, leaseUntil, expiresAt, createdAt, completedAt, keep, old =
  load(KEYS[1])
if v == nil then return state end
if not v or state ~= P or token ~= tonumber(ARGV[1]) or expiresAt <= now then return { 6 } end
