--[[
  fence (fragment, `--@include fence now=ARGV[n]`, after lib/record.lua): the preamble of complete, release
  and renew. With the record read, returns 6 (fenced) unless ARGV[1], the caller's token, is the current claim
  of a live in-progress record (the time is read only when the rest already holds). Past that point the locals
  now, v, state, waiters, fpLen, attempt, token, leaseUntil, expiresAt, createdAt, completedAt, keep and old
  (a 0.1 HASH) describe the caller's claim.
]]
if not v or state ~= P or token ~= tonumber(ARGV[1]) then return 6 end
--@include clock arg=@{now}
if expiresAt <= now then return 6 end
