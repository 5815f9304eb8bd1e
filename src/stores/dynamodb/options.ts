/**
 * @module The DynamoDB store's options, checked once at construction.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { InvalidOptionsError } from '../../core/errors.js';
import { knownOptions, optionalFunction } from '../../core/validate.js';

export interface DynamoDbStoreOptions {
  /** A `DynamoDBClient` from `@aws-sdk/client-dynamodb` the caller created and owns (region, credentials, retries). */
  readonly client: DynamoDBClient;
  /** The table (see `migrate`). Default `oncely_keys`. */
  readonly table?: string;
  /**
   * Milliseconds since the epoch. Default `Date.now`. DynamoDB has no server clock a condition can read, so
   * leases and expiry follow the clocks of the hosts that run the store: keep them in sync (NTP, Amazon Time
   * Sync). Tests pass a fake clock.
   */
  readonly clock?: () => number;
}

export interface ResolvedOptions {
  readonly client: DynamoDBClient;
  readonly table: string;
  readonly clock: () => number;
}

/** DynamoDB's rule for table names: 3 to 255 of letters, digits, `_`, `.` and `-`. */
export function tableName(value: unknown, fallback = 'oncely_keys'): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^[A-Za-z0-9_.-]{3,255}$/.test(value))
    throw new InvalidOptionsError(
      `dynamodb: table must be 3 to 255 letters, digits, '_', '.' or '-', got ${JSON.stringify(value)}`,
    );
  return value;
}

/** A DynamoDB client as the SDK makes it: something with `send`. */
export function checkClient(what: string, client: unknown): asserts client is DynamoDBClient {
  if (
    client === null ||
    typeof client !== 'object' ||
    typeof (client as { send?: unknown }).send !== 'function'
  )
    throw new InvalidOptionsError(`${what}: client must be a DynamoDBClient from @aws-sdk/client-dynamodb`);
}

export function resolveOptions(options: DynamoDbStoreOptions): ResolvedOptions {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionsError('DynamoDbStore: options with a DynamoDBClient are required');
  knownOptions('DynamoDbStore', options, ['client', 'table', 'clock']);
  checkClient('DynamoDbStore', options.client);
  optionalFunction('clock', options.clock);
  return { client: options.client, table: tableName(options.table), clock: options.clock ?? Date.now };
}
