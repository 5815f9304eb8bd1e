--[[
  pack (fragment, `--@include pack`, after lib/record.lua and a `local record`): sets `record` to the bytes of the
  record the locals lbit (1 with a label, else 0), state, waiters, attempt, token, leaseUntil, expiresAt, createdAt,
  completedAt (read only when state is C), kept (its keep), tag and fpLen (the first byte and the length of its
  fingerprint region) and tail .. more (the fingerprint region, then the label region and the outcome, if any: two
  strings, so the record is made with one concatenation) describe: in layout 4 when its numbers fit there, else in
  layout 6 (lib/record.lua). Inline code, not a function, for the reason lib/record.lua gives.
]]
do
  local created, lease, expires = token - createdAt, leaseUntil - token, expiresAt - token
  local completed = state == C and completedAt - token or 0
  if tag ~= 127 and attempt < 65536 and kept < 16777216 and created >= 0 and created < 4294967296
    and lease >= -2147483648 and lease < 2147483648 and expires >= -2147483648 and expires < 2147483648
    and completed >= -2147483648 and completed < 2147483648 then
    record = struct.pack('>BBHI6I4i4i4i4I3', 4 + lbit, state + 128 * waiters, attempt, token, created, lease,
      expires, completed, kept) .. tail .. more
  else
    record = struct.pack(WIDE, 6 + lbit, state, waiters, fpLen, attempt, token, leaseUntil, expiresAt, createdAt,
      state == C and completedAt or 0, kept) .. tail .. more
  end
end
