--[[
  record (fragment, `--@include record`): the layouts of a record, ONE STRING per key at <prefix>:{<key>}, read with
  one GET, written whole with one SET (… PX, or … KEEPTTL when a complete keeps the claim's TTL) by a claim, a
  complete and a delete's tombstone, and patched in place with SETRANGE (release, renew, the waiter mark).

  Layout 4 (5 with a label): what this version writes, whenever its numbers fit. Big-endian, times in ms since the
  epoch, every time but the token as a distance from it:
     0  u8   layout: 4, or 5 for a record with a label
     1  u8   state: 'p' in progress, 'c' completed, 'r' released; + 0x80 once a waitFor registered on the key
             (watch-1.lua): only then do complete, release and delete PUBLISH, so nobody pays for pub/sub while
             nobody waits
     2  u16  attempt
     4  u48  fencing token
    10  u32  token - created at
    14  i32  lease until - token
    18  i32  expires at - token: the record's logical end
    22  i32  completed at - token (0 unless completed)
    26  u24  keep: how long the key outlives its logical end; its TTL runs to expires at + keep
    29  F    the fingerprint region, as begin-1.lua's ARGV[1] gives it: a tag byte, then
               tag 0-125  a fingerprint of that many bytes, as it is (F = tag + 1)
               tag 126    the first 16 characters of a SHA-256 fingerprint in base64url, the 43 characters every
                          entry point makes (F = 17): 96 bits, for telling one request from another under one key
               tag 127    a fingerprint of 126 bytes or more (layout 6 only; F in its header)
  Layout 6 (7 with a label): the same fields at the widths of layout 2 below, for a record whose numbers do not fit
  layout 4 (an attempt from 65,536, a keep from 4.66 hours, times more than 24.8 days from the token) or whose
  fingerprint is 126 bytes or more: layout 2's 43-byte header, F (u16) the length of the fingerprint region.
  Layout 2 (3 with a label): what versions before layout 4 wrote, read as it is: layout 6's header with waiters as
  byte 2 and the fingerprint's bytes as they are, without a tag (F their length). A claim continues it in layout 4
  or 6; a complete of a claim made on it keeps layout 2 or 3.
  After the fingerprint region, in every layout:
             layouts 3, 5 and 7 only, the label (what the key belongs to, kept from the claim that made the record):
     …  u16  L: its length in bytes
     …  L    the label, UTF-8
     …  …    outcome of a completed record: written by the client, handed back to it as it is, never read here
             (status, encoding, storage, headers, body; see src/stores/redis/record.ts)

  Past the fingerprint an in-progress or released record holds its label region (u16 and label) or nothing, so a
  claim that continues a record keeps that region as it is.

  The TTL (save below) runs to max(expires at, token + 1, now + 1 s), plus a claim's lease: past its logical end a
  record is gone for every script, but while the clock has not passed its token the key stays, so the next claim
  (max(token + 1, now)) out-ranks it; the second keeps a tombstone alive when a test clock lags real time (Redis'
  own expiry clock); the lease lets a complete within it keep the TTL (no PEXPIRE, no change to the expiry
  table) when its retention is not longer than the claim's. Since expires at + keep is where the TTL ends, the
  scripts read the server time off the TTL (lib/clock.lua).

  Defines P, C, R (state bytes), WIDE (layouts 2 and 6), FIXED (43) and U48, then reads the record at KEYS[1] into
  the locals v (its bytes; false when the key holds nothing), old (true for a 0.1 HASH) and its fields: layout,
  state, waiters, fpAt and fpLen (where the fingerprint region starts, 0-based, and its length), tag (the region's
  first byte, read in layout 4 only), attempt, token, leaseUntil, expiresAt, createdAt, completedAt, keep (nil when
  there is no record). A key that holds something
  that is not a record ends the script here with {-1, what}.

  Inline code, not a function: a function defined at the top of a script is made anew on every call of it
  (bench/redis/instructions.ts), and this runs on every call of every script.
]]
local WIDE = '>BBBHI4I6I6I6I6I6I4'
local FIXED = 43
local P, C, R = 112, 99, 114
local U48 = 281474976710656

local v = redis.pcall('GET', KEYS[1])
local old = false
if type(v) == 'table' then
--@include legacy
  v, old = legacy(KEYS[1]), true
  if type(v) == 'table' then return v end
end
local layout, state, waiters, fpAt, fpLen, tag, attempt, token, leaseUntil, expiresAt, createdAt, completedAt, keep
if v then
  layout = string.byte(v) or 0
  if layout == 4 or layout == 5 then
    if #v < 30 then return { -1, 'a string that is not a record' } end
    local created, lease, expires, completed
    layout, state, attempt, token, created, lease, expires, completed, keep, tag =
      struct.unpack('>BBHI6I4i4i4i4I3B', v)
    waiters, fpAt, fpLen = 0, 29, tag == 126 and 17 or tag + 1
    if state > 127 then state, waiters = state - 128, 1 end
    createdAt, leaseUntil, expiresAt = token - created, token + lease, token + expires
    completedAt = state == C and token + completed or 0
  elseif layout == 2 or layout == 3 or layout == 6 or layout == 7 then
    if #v < FIXED then return { -1, 'a string that is not a record' } end
    layout, state, waiters, fpLen, attempt, token, leaseUntil, expiresAt, createdAt, completedAt, keep =
      struct.unpack(WIDE, v)
    fpAt = FIXED
  else
    return { -1, 'a string that is not a record' }
  end
  if #v < fpAt + fpLen or (state ~= P and state ~= C and state ~= R) then
    return { -1, 'a malformed record' }
  end
end
