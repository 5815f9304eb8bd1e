/**
 * @module The DynamoDB store's errors: every failure of a call the store sends becomes an `OncelyError` the engine
 * expects (`StoreUnavailableError`, the SDK's error as `cause`, so the engine fails closed and its breaker counts
 * it), with a hint where the fix is known (a missing table); an outcome too large for one item is its own error,
 * never retried. A `ConditionalCheckFailedException` is an answer (fenced, in progress, …), never passed here.
 */
import { isOncelyError, OncelyError, StoreUnavailableError } from '../../core/errors.js';

/**
 * `complete` was given an outcome that makes the item larger than DynamoDB's 400 KB limit. Nothing was written:
 * the key stays in progress under its claim. Keep outcomes below the limit with the engine's `maxBodyBytes`
 * (above it the body goes to a `blobStore`, or is not retained) and its compression (`compressAboveBytes`).
 */
export class OutcomeTooLargeError extends OncelyError {
  override name = 'OutcomeTooLargeError' as const;
  constructor(
    readonly table: string,
    /** The item's size as counted before sending, or undefined when DynamoDB itself refused it. */
    readonly itemBytes: number | undefined,
    readonly limitBytes: number,
    options: { cause?: unknown } = {},
  ) {
    const size = itemBytes === undefined ? 'more than' : `${itemBytes} bytes, above`;
    super(
      // A setting that lets outcomes through which the store cannot hold: a configuration error, as bad options.
      'ONCELY_INVALID_OPTIONS',
      `dynamodb complete refused: the outcome makes an item of ${size} DynamoDB's limit of ${limitBytes} bytes ` +
        `(table "${table}"); nothing was stored. Lower the engine's maxBodyBytes (bodies above it go to a ` +
        'blobStore, or are not retained) or keep compression on (compressAboveBytes)',
      options,
    );
  }
}

export const isOutcomeTooLargeError = (error: unknown): error is OutcomeTooLargeError =>
  error instanceof Error && error.name === 'OutcomeTooLargeError' && 'code' in error;

/** The SDK error's name (`ResourceNotFoundException`, `ThrottlingException`, …), or undefined. */
export function awsErrorName(error: unknown): string | undefined {
  return error instanceof Error ? error.name : undefined;
}

/** The refusal of a conditional write: an answer, not a failure. */
export const isConditionFailed = (error: unknown): boolean =>
  awsErrorName(error) === 'ConditionalCheckFailedException';

const THROTTLED = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
]);

/** DynamoDB's refusal of an item above 400 KB (PutItem and UpdateItem word it differently). */
export const isItemTooLarge = (error: unknown): boolean =>
  awsErrorName(error) === 'ValidationException' &&
  error instanceof Error &&
  /item size.*exceeded the maximum allowed size/i.test(error.message);

/** Any failure of the store's own calls, as the engine expects it. */
export function storeError(operation: string, table: string, error: unknown): OncelyError {
  if (isOncelyError(error)) return error;
  const name = awsErrorName(error) ?? 'Error';
  const message = error instanceof Error ? error.message : String(error);
  if (name === 'ResourceNotFoundException') {
    return new StoreUnavailableError(
      `dynamodb ${operation} failed: table "${table}" does not exist (ResourceNotFoundException); ` +
        'create it with store.migrate() (or migrate(client, { table }) from oncely/dynamodb), or with the ' +
        'CloudFormation or CDK definition in the docs',
      { cause: error },
    );
  }
  const what = THROTTLED.has(name) ? 'was throttled' : 'failed';
  return new StoreUnavailableError(`dynamodb ${operation} ${what} (${name}: ${message})`, { cause: error });
}
