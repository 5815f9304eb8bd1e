/**
 * @module How the MySQL store reads its drivers' errors: the server's error number (both drivers give `errno` and
 * `sqlState` for it), what may simply run again, and the `OncelyError` every failure becomes.
 */
import { isOncelyError, type OncelyError, StoreUnavailableError } from '../../core/errors.js';

/** The server's error number (1213, 1146, …), or undefined for network and driver errors. */
export function serverErrorOf(error: unknown): number | undefined {
  if (!(error instanceof Error) || !('sqlState' in error) || !('errno' in error)) return undefined;
  const { errno, sqlState } = error as { errno: unknown; sqlState: unknown };
  return typeof errno === 'number' && typeof sqlState === 'string' && sqlState !== '' ? errno : undefined;
}

/**
 * Whether the server itself answered with this error (it refused the statement), rather than the client or the
 * network failing under it: connection errors (SQLSTATE class 08), the C client's 2000–2999 and the mariadb
 * connector's own 45000 and up carry numbers too, but say nothing of what the server did.
 */
export function isServerAnswer(error: unknown): boolean {
  const code = serverErrorOf(error);
  if (code === undefined) return false;
  const state = String((error as { sqlState?: unknown }).sqlState);
  return !state.startsWith('08') && !(code >= 2000 && code < 3000) && code < 45000;
}

/** ER_LOCK_DEADLOCK: the server rolled the statement's transaction back. */
export const ER_LOCK_DEADLOCK = 1213;
/** ER_LOCK_WAIT_TIMEOUT: a row lock stayed held longer than `innodb_lock_wait_timeout`. */
export const ER_LOCK_WAIT_TIMEOUT = 1205;

/** A lost race between statements (deadlock, lock wait), not an outage: the statement may simply run again. */
export function isRetryable(error: unknown): boolean {
  const code = serverErrorOf(error);
  return code === ER_LOCK_DEADLOCK || code === ER_LOCK_WAIT_TIMEOUT;
}

/** Errors of a missing or older table, with what fixes them. */
function hintFor(code: number | undefined, table: string): string | undefined {
  switch (code) {
    case 1146: // ER_NO_SUCH_TABLE
    case 1305: // ER_SP_DOES_NOT_EXIST: the table's procedures
      return `the table ${table} or its procedures do not exist: run store.migrate() or \`oncely migrate --store mysql\``;
    case 1054: // ER_BAD_FIELD_ERROR
    case 1318: // ER_SP_WRONG_NO_OF_ARGS
      return `the table ${table} is from another version: run store.migrate() or \`oncely migrate --store mysql\``;
    case 1370: // ER_PROCACCESS_DENIED_ERROR
      return "the user may not EXECUTE the table's procedures: GRANT EXECUTE on them (or the database)";
    case 1153: // ER_NET_PACKET_TOO_LARGE
      return "the outcome is larger than the server's max_allowed_packet";
    default:
      return undefined;
  }
}

/**
 * Every failure of the store's own statements, as the engine expects it: an `OncelyError`, normally
 * `StoreUnavailableError` (the engine fails closed: 503 over HTTP), with the driver's error as `cause` so the
 * server's error number and SQLSTATE stay inspectable.
 */
export function storeError(operation: string, error: unknown, table: string): OncelyError {
  if (isOncelyError(error)) return error;
  const code = serverErrorOf(error);
  // The server's own words: the drivers' `message` may carry the statement and its values (the mariadb connector
  // appends both), which have no place in a log line.
  const server = (error as { sqlMessage?: unknown } | null)?.sqlMessage;
  const message =
    typeof server === 'string' ? server : error instanceof Error ? error.message : String(error);
  const hint = hintFor(code, table);
  const detail = code === undefined ? message : `error ${code}: ${message}`;
  return new StoreUnavailableError(`mysql ${operation} failed (${detail})${hint ? `; ${hint}` : ''}`, {
    cause: error,
  });
}
