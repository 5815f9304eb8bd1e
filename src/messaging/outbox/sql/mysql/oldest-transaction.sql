-- oldest-transaction: how long the server's oldest open transaction that has written something has run, in ms (0
-- when none). If it wrote outbox events, it holds their keys: other writers of those keys wait for it, and its
-- events wait for its commit. No parameters. Reads information_schema.INNODB_TRX, which needs the PROCESS
-- privilege; stats reports 0 without it (maintenance.ts).
SELECT COALESCE(MAX(TIMESTAMPDIFF(MICROSECOND, trx_started, NOW(6))) DIV 1000, 0) AS oldest_tx_ms
FROM information_schema.INNODB_TRX
WHERE trx_rows_modified > 0
