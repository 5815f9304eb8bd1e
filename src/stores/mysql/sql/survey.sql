-- survey: the inspector's bounded walk (the dashboard, the CLI): at most :walk live rows, newest expiry first
-- down the expiry index, never a body (the one more only tells whether the walk stopped early). Rows past
-- expires_at_ms do not exist logically (as for get). :now ms (NULL: the server's UTC clock), :walk the scan limit + 1.
-- mark_headers carries the headers of a completed row with an empty body only: the one kind a mark can match.
SELECT k.`key`, k.label, k.state, k.fingerprint, k.token, k.attempt, k.taken_over, k.lease_until_ms,
  k.created_at_ms, k.completed_at_ms, k.expires_at_ms, k.status, c.now_ms,
  IF(k.state = 'completed' AND LENGTH(k.body) = 0, k.headers, NULL) AS mark_headers
FROM {{table}} k, (SELECT {{clock}} AS now_ms) c
WHERE k.expires_at_ms > c.now_ms
ORDER BY k.expires_at_ms DESC
LIMIT :walk
