-- delete: remove the record whatever its state, in ONE call (`CALL {{delete}}(p_key, p_now_ms)`).
-- Returns one row: existed (1 when the key had a live row, not past its expiry; 0 otherwise).
-- A new claim's token is GREATEST(token + 1, now), so a row whose token the clock has passed can go: now alone
-- out-ranks every token the key ever had. A row whose token the clock has NOT passed (claimed this very
-- millisecond, or tokens ran ahead of the clock) is emptied into a tombstone instead: released, expiring now,
-- fingerprint and outcome dropped, token kept, so the next claim still out-ranks its owner; get and stats no
-- longer see it, and purge removes it once the clock has passed the token. The row is locked first, so the
-- choice is made on its latest version even when a claim commits meanwhile.
CREATE PROCEDURE IF NOT EXISTS {{delete}}(IN p_key VARBINARY(512), IN p_now_ms BIGINT)
  MODIFIES SQL DATA
  SQL SECURITY INVOKER
BEGIN
  DECLARE v_found TINYINT DEFAULT 1;
  DECLARE v_now, v_token, v_expires BIGINT;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  START TRANSACTION;
  SELECT k.token, k.expires_at_ms INTO v_token, v_expires FROM {{table}} k WHERE k.`key` = p_key FOR UPDATE;
  SET v_now = {{clock}};
  IF v_found = 1 AND v_token < v_now THEN
    DELETE FROM {{table}} WHERE `key` = p_key;
  ELSEIF v_found = 1 THEN
    UPDATE {{table}} k SET
        k.state = 'released', k.fingerprint = '', k.expires_at_ms = v_now, k.completed_at_ms = NULL,
        k.status = NULL, k.headers = NULL, k.body = NULL, k.encoding = NULL, k.storage = NULL
      WHERE k.`key` = p_key;
  END IF;
  COMMIT;
  SELECT (v_found = 1 AND v_expires > v_now) AS existed;
END
