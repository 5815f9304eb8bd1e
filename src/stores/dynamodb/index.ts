/**
 * @module oncely/dynamodb: the DynamoDB store. Each transition is one conditional write on the key's item; the
 * caller creates and owns the `DynamoDBClient` (`@aws-sdk/client-dynamodb`, an optional peer dependency).
 *
 * @example
 * import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
 * import { DynamoDbStore } from 'oncely/dynamodb';
 * const store = new DynamoDbStore({ client: new DynamoDBClient({}), table: 'oncely_keys' });
 */
export { isOutcomeTooLargeError, OutcomeTooLargeError } from './errors.js';
export { type MigrateOptions, type MigrateResult, migrate } from './migrate.js';
export type { DynamoDbStoreOptions } from './options.js';
export { MAX_ITEM_BYTES } from './size.js';
export { DynamoDbStore } from './store.js';
