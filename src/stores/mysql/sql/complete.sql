-- complete: store the outcome if :token is still the key's current claim (fenced otherwise).
-- :key, :token, :status, :headers (UTF-8 JSON array of [name, value]), :body, :encoding, :storage, :retention
-- ms, :now ms (NULL: the server's UTC clock). One affected row when the claim was current, none when fenced: the
-- row's state always changes, so the count means the same with or without the client's found-rows flag.
UPDATE {{table}} SET
  state = 'completed',
  status = :status,
  headers = :headers,
  body = :body,
  encoding = :encoding,
  storage = :storage,
  completed_at_ms = {{clock}},
  expires_at_ms = {{clock}} + :retention
WHERE `key` = :key AND token = :token AND state = 'inProgress' AND expires_at_ms > {{clock}}
