--[[
  record (fragment, `--@include record`): layout 2 of a record, ONE STRING per key at <prefix>:{<key>}, read with
  one GET, written whole with one SET (… PX, or … KEEPTTL when a complete keeps the claim's TTL) by a claim, a
  complete and a delete's tombstone, and patched in place with SETRANGE (release, renew, the waiter mark).

  Bytes, big-endian, times in ms since the epoch:
     0  u8   layout: 2, or 3 for a record with a label (oncely 0.1 wrote a HASH instead, read below as if it were
             layout 2)
     1  u8   state: 'p' in progress, 'c' completed, 'r' released
     2  u8   waiters: 1 once a waitFor registered on the key (watch-1.lua); only then do complete, release and
             delete PUBLISH, so nobody pays for pub/sub while nobody waits
     3  u16  F: length of the fingerprint in bytes
     5  u32  attempt
     9  u48  fencing token
    15  u48  lease until
    21  u48  expires at: the record's logical end
    27  u48  created at
    33  u48  completed at (0 unless completed)
    39  u32  keep: how long the key outlives its logical end; its TTL runs to expires at + keep
    43  F    fingerprint
             layout 3 only, the label (what the key belongs to, kept from the claim that made the record):
  43+F  u16  L: its length in bytes
  45+F  L    the label, UTF-8
     …  …    outcome of a completed record: written by the client, handed back to it as it is, never read here
             (status, encoding, storage, headers, body; see src/stores/redis/record.ts)

  A record without a label is written in layout 2, byte for byte as before labels: it costs nothing more. Past
  the fingerprint an in-progress or released record holds its label region (u16 and label) or nothing, so a claim
  that continues a record keeps that region as it is.

  The TTL (save below) runs to max(expires at, token + 1, now + 1 s), plus a claim's lease: past its logical end a
  record is gone for every script, but while the clock has not passed its token the key stays, so the next claim
  (max(token + 1, now)) out-ranks it; the second keeps a tombstone alive when a test clock lags real time (Redis'
  own expiry clock); the lease lets a complete within it keep the TTL (no PEXPIRE, no change to the expiry
  table) when its retention is not longer than the claim's. Since expires at + keep is where the TTL ends, the
  scripts read the server time off the TTL (lib/clock.lua).

  Defines P, C, R (state bytes), FIXED (43), LAYOUT and U48, then reads the record at KEYS[1] into the locals
  v (its bytes; false when the key holds nothing), old (true for a 0.1 HASH) and its fixed fields: layout (2 or
  3), state, waiters, fpLen, attempt, token, leaseUntil, expiresAt, createdAt, completedAt, keep (nil when there
  is no record). A key that holds something that is not a record ends the script here with {-1, what}.

  Inline code, not a function: a function defined at the top of a script is made anew on every call of it
  (bench/redis/instructions.ts), and this runs on every call of every script.
]]
local LAYOUT = '>BBBHI4I6I6I6I6I6I4'
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
local layout, state, waiters, fpLen, attempt, token, leaseUntil, expiresAt, createdAt, completedAt, keep
if v then
  if #v < FIXED then return { -1, 'a string that is not a layout 2 record' } end
  layout, state, waiters, fpLen, attempt, token, leaseUntil, expiresAt, createdAt, completedAt, keep =
    struct.unpack(LAYOUT, v)
  if layout ~= 2 and layout ~= 3 then return { -1, 'a string that is not a layout 2 record' } end
  if #v < FIXED + fpLen or (state ~= P and state ~= C and state ~= R) then
    return { -1, 'a malformed layout 2 record' }
  end
end
