-- claim: begin.sql's claim for a transaction that is already open and is not the procedure's to end: the caller's
-- own (joined mode, `CALL {{claim}}(…)` after a SAVEPOINT of the caller's) or one an ORM opened for oncely. One
-- call, one round trip. Nothing here starts, commits or rolls back a transaction: the claim's writes stay in the
-- open transaction, and what becomes of them is the caller's COMMIT or ROLLBACK (TO SAVEPOINT).
--
-- p_key, p_fingerprint, p_label   UTF-8 bytes (p_label NULL: none; as begin.sql)
-- p_lease_ms, p_retention_ms      the claim's lease and the in-progress record's retention
-- p_now_ms                        the time to decide by (tests' fake clock); NULL: the server's UTC clock
-- p_wait_s                        how long the row lock wait may last, in whole seconds (innodb_lock_wait_timeout,
--                                 set for this call only); NULL: the session's
--
-- Returns one row: outcome, token, attempt, retry_after_ms, completed_at_ms, status, headers, body, encoding,
-- storage, connection_id, where outcome is one of
--   acquired | takeover             the caller owns the key; the row is written (uncommitted) and locked
--   inProgress | mismatch | replay  decided on the row's latest version; nothing was written (the row is locked)
--   busy                            the lock wait ran out: another open transaction holds the key
--   lost                            the lock wait ran out and the server rolled the WHOLE transaction back with it
--                                   (innodb_rollback_on_timeout): the caller's transaction is gone
--   outside                         no transaction is open: the claim would commit on its own; nothing was done
-- and connection_id is the server's id of the connection (CONNECTION_ID()), so a lease end can KILL it.
--
-- Why not begin.sql: its rounds begin and end transactions of their own, and a deadlock there starts over in a fresh
-- one. In an open transaction nothing can start over: the claim must neither wait on a lock it cannot get nor
-- deadlock (InnoDB's deadlock victim loses the whole transaction, the caller's writes with it). So the row is
-- taken first with INSERT … ON DUPLICATE KEY UPDATE, which X-locks an existing row at once (a plain INSERT's
-- duplicate-key error takes a SHARED lock, which two claimers would both try to upgrade: a deadlock), or inserts a
-- claimable tombstone ('released', expired now) when there is none. Either way the one locked row is then read at
-- its latest version (a locking read: whatever the transaction's snapshot) and decided as begin.sql decides.
-- A deadlock (1213) is not caught: the server rolled the transaction back, and only its owner can start over.
CREATE PROCEDURE IF NOT EXISTS {{claim}}(
  IN p_key VARBINARY(512), IN p_fingerprint VARBINARY(1024), IN p_lease_ms BIGINT, IN p_retention_ms BIGINT,
  IN p_now_ms BIGINT, IN p_label VARBINARY(800), IN p_wait_s INT)
  MODIFIES SQL DATA
  SQL SECURITY INVOKER
BEGIN
  DECLARE v_found, v_open TINYINT DEFAULT 1;
  DECLARE v_busy TINYINT DEFAULT 0;
  DECLARE v_now, v_token, v_lease_until, v_expires, v_completed BIGINT;
  DECLARE v_attempt, v_status INT;
  DECLARE v_state, v_encoding, v_storage, v_outcome VARCHAR(16);
  DECLARE v_fingerprint VARBINARY(1024);
  DECLARE v_headers MEDIUMBLOB;
  DECLARE v_body LONGBLOB;
  DECLARE v_wait_s BIGINT DEFAULT @@SESSION.innodb_lock_wait_timeout;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  DECLARE CONTINUE HANDLER FOR 1205 SET v_busy = 1;
  DECLARE CONTINUE HANDLER FOR 1305 SET v_open = 0;
  -- Any other failure (a deadlock above all) goes to the caller as it is, with the session's lock wait back.
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    SET SESSION innodb_lock_wait_timeout = v_wait_s;
    RESIGNAL;
  END;

  -- Outside a transaction a SAVEPOINT is a no-op, so releasing it fails (1305): the one test both MySQL and MariaDB
  -- answer (MariaDB's @@in_transaction does not exist on MySQL).
  SAVEPOINT oncely_open;
  RELEASE SAVEPOINT oncely_open;
  IF v_open = 0 THEN
    SET v_outcome = 'outside';
  ELSE
    IF p_wait_s IS NOT NULL THEN
      SET SESSION innodb_lock_wait_timeout = p_wait_s;
    END IF;
    SET v_now = {{clock}};
    INSERT INTO {{table}}
        (`key`, state, fingerprint, token, attempt, taken_over, renewals, lease_until_ms, created_at_ms,
         expires_at_ms, label)
      VALUES (p_key, 'released', p_fingerprint, 0, 0, 0, 0, v_now, v_now, v_now, p_label)
      ON DUPLICATE KEY UPDATE `key` = `key`;
    IF v_busy = 0 THEN
      SELECT k.state, k.fingerprint, k.token, k.attempt, k.lease_until_ms, k.expires_at_ms, k.completed_at_ms,
          k.status, k.headers, k.body, k.encoding, k.storage
        INTO v_state, v_fingerprint, v_token, v_attempt, v_lease_until, v_expires, v_completed,
          v_status, v_headers, v_body, v_encoding, v_storage
        FROM {{table}} k WHERE k.`key` = p_key FOR UPDATE;
      -- By the clock after the wait, as begin.sql decides.
      SET v_now = {{clock}};
    END IF;

    IF v_busy = 1 THEN
      SET v_outcome = IF(@@innodb_rollback_on_timeout, 'lost', 'busy');
    ELSEIF v_found = 0 THEN
      -- Cannot be: the row was inserted or locked by this very call. Said rather than assumed.
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'oncely claim: the locked row is gone';
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
    SET SESSION innodb_lock_wait_timeout = v_wait_s;
  END IF;

  SELECT v_outcome AS outcome, v_token AS token, v_attempt AS attempt,
    IF(v_outcome = 'inProgress', v_lease_until - v_now, NULL) AS retry_after_ms,
    IF(v_outcome = 'replay', v_completed, NULL) AS completed_at_ms,
    IF(v_outcome = 'replay', v_status, NULL) AS status,
    IF(v_outcome = 'replay', v_headers, NULL) AS headers,
    IF(v_outcome = 'replay', v_body, NULL) AS body,
    IF(v_outcome = 'replay', v_encoding, NULL) AS encoding,
    IF(v_outcome = 'replay', v_storage, NULL) AS storage,
    CONNECTION_ID() AS connection_id;
END
