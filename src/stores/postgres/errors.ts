/**
 * @module The PostgreSQL store's failures as oncely errors: the SQLSTATEs the store acts on (lock timeout,
 * serialization conflict) and `storeError`, which keeps the driver's error as `cause` and adds a hint for the usual
 * setup mistakes.
 */
import { isOncelyError, type OncelyError, StoreUnavailableError } from '../../core/errors.js';

/** The SQLSTATE of a PostgreSQL error (the server's `code`), or undefined for network and driver errors. */
export function sqlStateOf(error: unknown): string | undefined {
  if (!(error instanceof Error) || !('severity' in error) || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

/** 55P03: a `lock_timeout` ran out (or NOWAIT found the row locked). */
export const isLockNotAvailable = (error: unknown): boolean => sqlStateOf(error) === '55P03';

/** 40001 / 40P01: the transaction lost a serialization race or a deadlock and may simply run again. */
export const isRetryableConflict = (error: unknown): boolean => {
  const state = sqlStateOf(error);
  return state === '40001' || state === '40P01';
};

const HINTS: Readonly<Record<string, string>> = {
  '42P01': 'the table does not exist: run store.migrate() or `oncely migrate`',
  '3F000': 'the schema does not exist: run store.migrate() or `oncely migrate`',
  '42703': 'the table is from another version: run store.migrate() or `oncely migrate`',
  '25P02': 'the transaction was already aborted by an earlier failed statement',
  '25P01': 'transactional({ client }) joins an open transaction: run BEGIN on that client first',
};

/**
 * Every failure of the store's own statements, as the engine expects it: an `OncelyError`, normally
 * `StoreUnavailableError` (the engine fails closed: 503 over HTTP), with the driver's error as `cause` so the
 * SQLSTATE and the server's fields stay inspectable.
 */
export function storeError(operation: string, error: unknown): OncelyError {
  if (isOncelyError(error)) return error;
  const state = sqlStateOf(error);
  const message = error instanceof Error ? error.message : String(error);
  const hint = state === undefined ? undefined : HINTS[state];
  const detail = state === undefined ? message : `SQLSTATE ${state}: ${message}`;
  return new StoreUnavailableError(`postgres ${operation} failed (${detail})${hint ? `; ${hint}` : ''}`, {
    cause: error,
  });
}
