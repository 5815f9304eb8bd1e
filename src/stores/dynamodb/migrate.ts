/**
 * @module The DynamoDB store's table: `migrate` creates it (partition key `pk`, on-demand capacity) and turns on
 * TTL on `ttl`, for tests and development; production tables are better declared with the application's
 * infrastructure (the docs give CloudFormation and CDK definitions of the same table).
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  type TableDescription,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { InvalidOptionsError } from '../../core/errors.js';
import { knownOptions } from '../../core/validate.js';
import { awsErrorName, storeError } from './errors.js';
import { checkClient, tableName } from './options.js';

export interface MigrateOptions {
  /** Default `oncely_keys`. */
  readonly table?: string;
  /** How long to wait for a new table to become active. Default 120,000 ms. */
  readonly timeoutMs?: number;
}

export interface MigrateResult {
  /** True when this call created the table; false when it was there already (with the right key schema). */
  readonly created: boolean;
  /**
   * `enabled`: DynamoDB's TTL removes items on `ttl` (turned on now or before). `unsupported`: the endpoint has
   * no TTL API (dynalite and some other emulators); expired records then stay as items, which the store treats
   * as expired all the same.
   */
  readonly ttl: 'enabled' | 'unsupported';
}

/** The TTL attribute: epoch seconds, written on every item (see item.ts). */
export const TTL_ATTRIBUTE = 'ttl';

/**
 * Creates the table when missing and turns on its TTL. Idempotent: a table already there is checked (its key
 * must be `pk`, a string, and nothing else) and kept.
 *
 * @example
 * import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
 * import { migrate } from 'oncely/dynamodb';
 * await migrate(new DynamoDBClient({}), { table: 'oncely_keys' });
 */
export async function migrate(client: DynamoDBClient, options: MigrateOptions = {}): Promise<MigrateResult> {
  checkClient('migrate', client);
  knownOptions('migrate', options, ['table', 'timeoutMs']);
  const table = tableName(options.table);
  const timeoutMs = options.timeoutMs ?? 120_000;
  let created = true;
  try {
    await client.send(
      new CreateTableCommand({
        TableName: table,
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
  } catch (error) {
    if (awsErrorName(error) !== 'ResourceInUseException') throw storeError('migrate', table, error);
    created = false;
  }
  await untilActive(client, table, timeoutMs);
  return { created, ttl: await enableTtl(client, table) };
}

/** Waits for the table to be ACTIVE (a new table takes seconds), and checks its key schema. */
async function untilActive(client: DynamoDBClient, table: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let pause = 50; ; pause = Math.min(pause * 2, 1_000)) {
    let description: TableDescription | undefined;
    try {
      description = (await client.send(new DescribeTableCommand({ TableName: table }))).Table;
    } catch (error) {
      throw storeError('migrate', table, error);
    }
    const key = description?.KeySchema ?? [];
    const type = description?.AttributeDefinitions?.find((a) => a.AttributeName === 'pk')?.AttributeType;
    if (key.length !== 1 || key[0]?.AttributeName !== 'pk' || key[0].KeyType !== 'HASH' || type !== 'S')
      throw new InvalidOptionsError(
        `migrate: table "${table}" exists with another key schema; oncely's table has the partition key pk (S) and no sort key`,
      );
    if (description?.TableStatus === 'ACTIVE') return;
    if (Date.now() > deadline)
      throw storeError(
        'migrate',
        table,
        new Error(`table still ${description?.TableStatus} after ${timeoutMs} ms`),
      );
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

async function enableTtl(client: DynamoDBClient, table: string): Promise<MigrateResult['ttl']> {
  try {
    const { TimeToLiveDescription: ttl } = await client.send(
      new DescribeTimeToLiveCommand({ TableName: table }),
    );
    if (ttl?.TimeToLiveStatus === 'ENABLED' || ttl?.TimeToLiveStatus === 'ENABLING') {
      if (ttl.AttributeName === TTL_ATTRIBUTE) return 'enabled';
      throw new InvalidOptionsError(
        `migrate: table "${table}" has TTL on "${ttl.AttributeName}"; oncely's items expire on "${TTL_ATTRIBUTE}"`,
      );
    }
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: table,
        TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
      }),
    );
    return 'enabled';
  } catch (error) {
    if (awsErrorName(error) === 'UnknownOperationException') return 'unsupported';
    throw storeError('migrate', table, error);
  }
}
