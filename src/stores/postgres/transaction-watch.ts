/**
 * @module A transactional claim's guard against code that ends the claim's transaction itself (its own `BEGIN …
 * COMMIT`, a bare `COMMIT`): told from the connection's protocol stream without a round trip, so the claim is not
 * completed over effects that no longer commit with it.
 */
import type { Client, PoolClient } from 'pg';

// PostgreSQL's warnings when transaction control runs where it does not fit: BEGIN inside a transaction (25001,
// "there is already a transaction in progress") and COMMIT / ROLLBACK outside one (25P01, "there is no
// transaction in progress"). Either, on the handed-out connection, means its holder is running transactions of
// its own on it: a COMMIT that followed would have committed the claim's transaction with it.
const TRANSACTION_CONTROL_WARNINGS = new Set(['25001', '25P01']);

interface ProtocolEvents {
  on(event: 'readyForQuery', listener: (message: { status?: string }) => void): unknown;
  off(event: 'readyForQuery', listener: (message: { status?: string }) => void): unknown;
}

/** Whether the claim's transaction is still the connection's own, as far as the connection has told. */
export interface TransactionWatch {
  readonly escaped: boolean;
  /** Stop watching: oncely's own COMMIT / ROLLBACK are about to end the transaction on purpose. */
  stop(): void;
}

/**
 * Watches the connection a transactional claim hands out for code that ends the claim's transaction itself (a
 * helper's `BEGIN … COMMIT`, a bare `COMMIT`): from then on its writes and the key's record no longer commit
 * together, and completing the claim would record an outcome whose effects may already be committed, or may
 * follow it. No round trip: every reply ends with ReadyForQuery, which carries the connection's transaction status,
 * and an idle status ('I') while the claim is open means the transaction ended under it. Drivers that do not expose
 * the protocol stream (pg-native) are watched through the warnings above, which catch `BEGIN … COMMIT`.
 */
export function watchTransaction(client: Client | PoolClient): TransactionWatch {
  let escaped = false;
  const onReady = (message: { status?: string }) => {
    if (message.status === 'I') escaped = true;
  };
  const onNotice = (notice: { code?: string | undefined }) => {
    if (notice.code !== undefined && TRANSACTION_CONTROL_WARNINGS.has(notice.code)) escaped = true;
  };
  // pg's Client keeps its protocol connection as `connection` (there since pg 1, though not in its types).
  const protocol = (client as unknown as { connection?: ProtocolEvents }).connection;
  protocol?.on('readyForQuery', onReady);
  client.on('notice', onNotice);
  return {
    get escaped() {
      return escaped;
    },
    stop() {
      protocol?.off('readyForQuery', onReady);
      client.off('notice', onNotice);
    },
  };
}
