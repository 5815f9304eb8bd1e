-- begin: claim the key, or say why not, in ONE call (`CALL {{begin}}(…)`, one round trip on both drivers).
-- A procedure, because MySQL has no RETURNING: the claim and the read of what decided it happen inside the server,
-- in one transaction, and the answer comes back in the same round trip (a replay carries the stored outcome).
-- Created with a strict sql_mode (migrate.ts), which a procedure keeps whatever the caller's session says.
--
-- p_key, p_fingerprint, p_label   UTF-8 bytes (p_label NULL: none; written only by a claim that makes the row or
--                                 one past its end: a takeover or a claim after a release keeps the row's label)
-- p_lease_ms, p_retention_ms      the claim's lease and the in-progress record's retention
-- p_now_ms                        the time to decide by (tests' fake clock); NULL: the server's UTC clock
-- p_keep_open                     0: plain mode, the claim commits here. 1: transactional mode, the transaction
--                                 stays open when the key is claimed (the caller's writes join it); it is ended
--                                 here for every other answer.
-- p_wait_s                        how long a row lock wait may last, in whole seconds (innodb_lock_wait_timeout,
--                                 set for this call only: the session's own value comes back before it returns);
--                                 NULL: the session's
--
-- Returns one row: outcome, token, attempt, retry_after_ms, completed_at_ms, status, headers, body, encoding,
-- storage, where outcome is one of
--   acquired | takeover             the caller owns the key (inserted, or reclaimed: expired, released, lease over)
--   inProgress | mismatch | replay  decided on a committed version of the row; nothing was written
--   busy                            a lock wait ran out (innodb_lock_wait_timeout): an open transaction holds the key
--   stale                           the row kept changing for 8 rounds: call again
--
-- A plain read decides first, without locks, so replays and conflicts never queue behind each other. Only a row
-- that looks claimable (or no row) is locked and decided again on its latest version. A duplicate-key error (a
-- concurrent claim inserted the row first) or a deadlock (1213: the server rolled the transaction back) starts the
-- round over in a fresh transaction, so the shared lock a duplicate-key error leaves is never upgraded in place.
CREATE PROCEDURE IF NOT EXISTS {{begin}}(
  IN p_key VARBINARY(512), IN p_fingerprint VARBINARY(1024), IN p_lease_ms BIGINT, IN p_retention_ms BIGINT,
  IN p_now_ms BIGINT, IN p_label VARBINARY(800), IN p_keep_open TINYINT, IN p_wait_s INT)
  MODIFIES SQL DATA
  SQL SECURITY INVOKER
BEGIN
  DECLARE v_round INT DEFAULT 0;
  DECLARE v_found, v_retry, v_busy TINYINT DEFAULT 0;
  DECLARE v_now, v_token, v_lease_until, v_expires, v_completed BIGINT;
  DECLARE v_attempt, v_status INT;
  DECLARE v_state, v_encoding, v_storage, v_outcome VARCHAR(16);
  DECLARE v_fingerprint VARBINARY(1024);
  DECLARE v_headers MEDIUMBLOB;
  DECLARE v_body LONGBLOB;
  DECLARE v_wait_s BIGINT DEFAULT @@SESSION.innodb_lock_wait_timeout;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  DECLARE CONTINUE HANDLER FOR 1062, 1213 SET v_retry = 1;
  DECLARE CONTINUE HANDLER FOR 1205 SET v_busy = 1;

  IF p_wait_s IS NOT NULL THEN
    SET SESSION innodb_lock_wait_timeout = p_wait_s;
  END IF;
  claim: LOOP
    SET v_round = v_round + 1, v_found = 1, v_retry = 0, v_outcome = NULL;
    START TRANSACTION;
    SELECT k.state, k.fingerprint, k.token, k.attempt, k.lease_until_ms, k.expires_at_ms, k.completed_at_ms,
        k.status, k.headers, k.body, k.encoding, k.storage
      INTO v_state, v_fingerprint, v_token, v_attempt, v_lease_until, v_expires, v_completed,
        v_status, v_headers, v_body, v_encoding, v_storage
      FROM {{table}} k WHERE k.`key` = p_key;
    SET v_now = {{clock}};
    IF v_found = 1 AND (v_expires <= v_now OR v_state = 'released'
        OR (v_state = 'inProgress' AND v_fingerprint = p_fingerprint AND v_lease_until <= v_now)) THEN
      -- Claimable as read: lock the latest version (waiting for an open transaction that holds it) and decide
      -- again on that, by the clock after the wait.
      SELECT k.state, k.fingerprint, k.token, k.attempt, k.lease_until_ms, k.expires_at_ms, k.completed_at_ms,
          k.status, k.headers, k.body, k.encoding, k.storage
        INTO v_state, v_fingerprint, v_token, v_attempt, v_lease_until, v_expires, v_completed,
          v_status, v_headers, v_body, v_encoding, v_storage
        FROM {{table}} k WHERE k.`key` = p_key FOR UPDATE;
      SET v_now = {{clock}};
    END IF;

    IF v_busy = 1 OR v_retry = 1 THEN
      SET v_outcome = NULL;
    ELSEIF v_found = 0 THEN
      -- No row (or it was purged while this call waited for it): make it. A concurrent claim that inserted the
      -- same key first makes this fail with 1062 (after waiting for that claim's transaction to end).
      INSERT INTO {{table}}
          (`key`, state, fingerprint, token, attempt, taken_over, renewals, lease_until_ms, created_at_ms,
           expires_at_ms, label)
        VALUES (p_key, 'inProgress', p_fingerprint, v_now, 1, 0, 0, v_now + p_lease_ms, v_now,
          v_now + p_retention_ms, p_label);
      IF v_retry = 0 AND v_busy = 0 THEN
        SET v_outcome = 'acquired', v_token = v_now, v_attempt = 1;
      END IF;
    ELSEIF v_expires <= v_now OR v_state = 'released'
        OR (v_state = 'inProgress' AND v_fingerprint = p_fingerprint AND v_lease_until <= v_now) THEN
      SET v_outcome = IF(v_state = 'inProgress' AND v_expires > v_now, 'takeover', 'acquired');
      SET v_token = GREATEST(v_token + 1, v_now),
        v_attempt = IF(v_expires <= v_now, 1, v_attempt + 1);
      UPDATE {{table}} k SET
          k.state = 'inProgress',
          k.fingerprint = p_fingerprint,
          k.token = v_token,
          k.attempt = v_attempt,
          k.taken_over = (v_outcome = 'takeover'),
          k.renewals = 0,
          k.lease_until_ms = v_now + p_lease_ms,
          k.created_at_ms = IF(v_expires <= v_now, v_now, k.created_at_ms),
          k.label = IF(v_expires <= v_now, p_label, k.label),
          k.completed_at_ms = NULL,
          k.expires_at_ms = v_now + p_retention_ms,
          k.status = NULL, k.headers = NULL, k.body = NULL, k.encoding = NULL, k.storage = NULL
        WHERE k.`key` = p_key;
    ELSEIF v_fingerprint <> p_fingerprint THEN
      SET v_outcome = 'mismatch';
    ELSEIF v_state = 'completed' THEN
      SET v_outcome = 'replay';
    ELSE
      SET v_outcome = 'inProgress';
    END IF;

    IF v_busy = 1 THEN
      SET v_outcome = 'busy';
      ROLLBACK;
      LEAVE claim;
    END IF;
    IF v_retry = 0 THEN
      LEAVE claim;
    END IF;
    ROLLBACK;
    IF v_round >= 8 THEN
      SET v_outcome = 'stale';
      LEAVE claim;
    END IF;
  END LOOP;

  IF p_keep_open = 0 OR v_outcome NOT IN ('acquired', 'takeover') THEN
    COMMIT;
  END IF;
  SET SESSION innodb_lock_wait_timeout = v_wait_s;
  SELECT v_outcome AS outcome, v_token AS token, v_attempt AS attempt,
    IF(v_outcome = 'inProgress', v_lease_until - v_now, NULL) AS retry_after_ms,
    IF(v_outcome = 'replay', v_completed, NULL) AS completed_at_ms,
    IF(v_outcome = 'replay', v_status, NULL) AS status,
    IF(v_outcome = 'replay', v_headers, NULL) AS headers,
    IF(v_outcome = 'replay', v_body, NULL) AS body,
    IF(v_outcome = 'replay', v_encoding, NULL) AS encoding,
    IF(v_outcome = 'replay', v_storage, NULL) AS storage;
END
