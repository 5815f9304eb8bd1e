--[[
  same-fingerprint (fragment, `--@include same-fingerprint`, in begin-1.lua): sets the local `same` to whether the
  record in layout 2 or 3 (written before layout 4: its fingerprint stored as it is, fpLen bytes at fpAt) was made
  by the request whose fingerprint region is the local `fingerprint` (tagged, lib/record.lua). A 43-character
  SHA-256 fingerprint is compared by the 16 characters layout 4 keeps of it, so a request retried across the
  upgrade replays the record its first attempt left; any other by all of its bytes. Only a call that meets such a
  record runs this.
]]
local same
if string.byte(fingerprint) == 126 then
  same = fpLen == 43 and string.sub(v, fpAt + 1, fpAt + 16) == string.sub(fingerprint, 2)
else
  same = fpLen == #fingerprint - 1 and string.sub(v, fpAt + 1, fpAt + fpLen) == string.sub(fingerprint, 2)
end
