/**
 * @module Every error oncely throws is an `OncelyError` with a stable `code`; adapters map codes to HTTP answers in one
 * place (`src/http/policy.ts`) and callers branch on the `isX()` guards, which match on `name` so they work across
 * duplicated copies of the package (the ky / p-limit convention).
 */
export type OncelyErrorCode =
  | 'ONCELY_INVALID_OPTIONS'
  | 'ONCELY_INVALID_KEY'
  | 'ONCELY_IN_PROGRESS'
  | 'ONCELY_FINGERPRINT_MISMATCH'
  | 'ONCELY_STORE_UNAVAILABLE'
  | 'ONCELY_LEASE_LOST'
  | 'ONCELY_CORRUPT_RECORD'
  | 'ONCELY_RESPONSE_NOT_RETAINED'
  | 'ONCELY_CLAIM_SETTLED'
  | 'ONCELY_TRANSACTION_ESCAPED'
  | 'ONCELY_RECORD_UNREADABLE'
  // oncely/client: the caller's side of the protocol (src/client/errors.ts).
  | 'ONCELY_RETRIES_EXHAUSTED'
  | 'ONCELY_DEADLINE_EXCEEDED'
  | 'ONCELY_KEY_REJECTED'
  | 'ONCELY_BODY_NOT_REPLAYABLE';

export interface OncelyErrorOptions {
  cause?: unknown;
}

export class OncelyError extends Error {
  override name = 'OncelyError';
  readonly code: OncelyErrorCode;

  constructor(code: OncelyErrorCode, message: string, options: OncelyErrorOptions = {}) {
    super(message, 'cause' in options ? { cause: options.cause } : undefined);
    this.code = code;
  }
}

/** Options given to a factory or constructor are wrong; thrown at construction, never per request. */
export class InvalidOptionsError extends OncelyError {
  override name = 'InvalidOptionsError' as const;
  constructor(message: string) {
    super('ONCELY_INVALID_OPTIONS', message);
  }
}

/** The idempotency key is empty, too long, or holds characters outside printable ASCII. */
export class InvalidKeyError extends OncelyError {
  override name = 'InvalidKeyError' as const;
  constructor(
    readonly reason: 'missing' | 'empty' | 'too-long' | 'bad-characters' | 'bad-quoting',
    message: string,
  ) {
    super('ONCELY_INVALID_KEY', message);
  }
}

/** Another caller holds the key right now; retry after `retryAfterMs`. */
export class InProgressError extends OncelyError {
  override name = 'InProgressError' as const;
  constructor(
    readonly retryAfterMs: number,
    readonly attempt: number,
  ) {
    super('ONCELY_IN_PROGRESS', `the key is being processed by another caller; retry in ${retryAfterMs} ms`);
  }
}

/** The key was first used with a different request (payload, method or path): reusing it is a client bug. */
export class FingerprintMismatchError extends OncelyError {
  override name = 'FingerprintMismatchError' as const;
  constructor() {
    super('ONCELY_FINGERPRINT_MISMATCH', 'the key was already used with a different request payload');
  }
}

/** The store could not be reached, answered too slowly, or the circuit breaker is open. Fail closed. */
export class StoreUnavailableError extends OncelyError {
  override name = 'StoreUnavailableError' as const;
  /**
   * True when the write itself went through but a durability check after it fell short (Redis `durable` with too
   * few replica acknowledgements): the outcome is stored, and may be lost if the primary fails now. Not retried.
   */
  readonly outcomeStored: boolean;
  constructor(message: string, options: OncelyErrorOptions & { outcomeStored?: boolean } = {}) {
    super('ONCELY_STORE_UNAVAILABLE', message, options);
    this.outcomeStored = options.outcomeStored ?? false;
  }
}

/**
 * The caller's claim on the key ended before it finished: its lease ran out and another caller took over
 * (a higher fencing token), or the record was deleted. Its result was not stored.
 */
export class LeaseLostError extends OncelyError {
  override name = 'LeaseLostError' as const;
  constructor(
    readonly token: number,
    message = `the claim with fencing token ${token} was lost; its result was not stored`,
  ) {
    super('ONCELY_LEASE_LOST', message);
  }
}

/** A stored record could not be decoded (foreign writer, truncated value). It is reported, never replayed. */
export class CorruptRecordError extends OncelyError {
  override name = 'CorruptRecordError' as const;
  constructor(message: string, options: OncelyErrorOptions = {}) {
    super('ONCELY_CORRUPT_RECORD', message, options);
  }
}

/** The original outcome was completed but its body exceeded the size cap and no blob store kept it. */
export class ResponseNotRetainedError extends OncelyError {
  override name = 'ResponseNotRetainedError' as const;
  constructor(readonly originalStatus: number | undefined) {
    super('ONCELY_RESPONSE_NOT_RETAINED', 'the original result completed but was too large to be retained');
  }
}

/** A claim was completed or released already: a claim is settled once, so an effect is never recorded twice. */
export class ClaimSettledError extends OncelyError {
  override name = 'ClaimSettledError' as const;
  constructor(
    readonly token: number,
    readonly attempted: 'complete' | 'release',
  ) {
    super(
      'ONCELY_CLAIM_SETTLED',
      `the claim with fencing token ${token} is settled already; ${attempted} refused`,
    );
  }
}

/** What became of a key whose transaction escaped (see `TransactionEscapedError`). */
export type EscapedKeyOutcome =
  /** The escape committed the claim: the key is a stored failure for its retention and never runs again. */
  | 'terminal'
  /** The escape rolled the claim back with everything written before it: nothing of it committed, a retry runs. */
  | 'released'
  /** The failure could not be stored (the store failed): the key stays claimed until its lease ends. */
  | 'unknown';

/**
 * Transactional mode: the code holding the claim ended the transaction oncely opened for it (a `COMMIT`, `END`,
 * `COMMIT AND CHAIN`, `ROLLBACK` or `BEGIN … COMMIT` of its own on the handed-out connection), so its writes and
 * the key's record no longer commit together. The outcome is refused. When the escape committed, the writes it
 * committed cannot be undone, so the key is kept as a terminal failure: this call and every later call with the
 * key get this error (over HTTP, the `transaction-escaped` problem) for the key's retention, and the handler never
 * runs again. `keyOutcome` says which it was; `replayed` is true for a later call that met the stored failure.
 */
export class TransactionEscapedError extends OncelyError {
  override name = 'TransactionEscapedError' as const;
  /** The fencing token of the claim that escaped; undefined when `replayed`. */
  readonly token: number | undefined;
  readonly keyOutcome: EscapedKeyOutcome;
  readonly replayed: boolean;
  constructor(
    token: number | undefined,
    options: { keyOutcome?: EscapedKeyOutcome; replayed?: boolean; cause?: unknown } = {},
  ) {
    const keyOutcome = options.keyOutcome ?? 'terminal';
    const replayed = options.replayed ?? false;
    super(
      'ONCELY_TRANSACTION_ESCAPED',
      `${replayed ? 'an earlier call with this key' : `the claim with fencing token ${token}`} ended the transaction oncely opened for it (COMMIT, ROLLBACK or BEGIN on the handed-out connection), so its writes and the key's record did not commit together. ${KEY_OUTCOME_TEXT[keyOutcome]}. Write through the handed-out connection without transaction statements (use SAVEPOINT for nested work)`,
      'cause' in options ? { cause: options.cause } : {},
    );
    this.token = token;
    this.keyOutcome = keyOutcome;
    this.replayed = replayed;
  }
}

const KEY_OUTCOME_TEXT: Record<EscapedKeyOutcome, string> = {
  terminal:
    'Its writes may have committed, so the key is kept as this failure for its retention and never runs again',
  released: 'The escape rolled the claim back with its writes; the key was released',
  unknown:
    'Its writes may have committed, and the failure could not be stored: the key stays claimed until its lease ends',
};

/**
 * Encryption at rest: a stored outcome could not be opened. `reason` says why: `unknown-key` (sealed under a key
 * id that is not in the list: removed too early, or another deployment's key), `unauthentic` (the bytes, the key
 * they are stored under or the key's material differ from what sealed them: tampering, a record copied to another
 * key), `malformed` (not the sealed format), `plaintext` (stored in clear while `allowPlaintext` is off). Reads
 * fail closed: the request is refused (500 `record-unreadable` over HTTP), never run a second time.
 */
export class RecordUnreadableError extends OncelyError {
  override name = 'RecordUnreadableError' as const;
  constructor(
    readonly reason: 'unknown-key' | 'unauthentic' | 'malformed' | 'plaintext',
    message: string,
    /** The key id named in the record, when it could be read. */
    readonly keyId?: string,
    options: OncelyErrorOptions = {},
  ) {
    super('ONCELY_RECORD_UNREADABLE', message, options);
  }
}

const guard =
  <T extends OncelyError>(name: string) =>
  (error: unknown): error is T =>
    error instanceof Error && error.name === name && 'code' in error;

export const isOncelyError = (error: unknown): error is OncelyError =>
  error instanceof Error &&
  'code' in error &&
  typeof error.code === 'string' &&
  error.code.startsWith('ONCELY_');
export const isInvalidOptionsError = guard<InvalidOptionsError>('InvalidOptionsError');
export const isInvalidKeyError = guard<InvalidKeyError>('InvalidKeyError');
export const isInProgressError = guard<InProgressError>('InProgressError');
export const isFingerprintMismatchError = guard<FingerprintMismatchError>('FingerprintMismatchError');
export const isStoreUnavailableError = guard<StoreUnavailableError>('StoreUnavailableError');
export const isLeaseLostError = guard<LeaseLostError>('LeaseLostError');
export const isCorruptRecordError = guard<CorruptRecordError>('CorruptRecordError');
export const isResponseNotRetainedError = guard<ResponseNotRetainedError>('ResponseNotRetainedError');
export const isClaimSettledError = guard<ClaimSettledError>('ClaimSettledError');
export const isTransactionEscapedError = guard<TransactionEscapedError>('TransactionEscapedError');
export const isRecordUnreadableError = guard<RecordUnreadableError>('RecordUnreadableError');
