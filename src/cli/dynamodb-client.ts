/**
 * @module The DynamoDB client a command uses, made by the AWS SDK from the environment as any SDK client is (region,
 * credentials and profile from the standard AWS variables and files, an endpoint from `AWS_ENDPOINT_URL_DYNAMODB` or
 * `AWS_ENDPOINT_URL`), with the request timeout the DynamoDB store's page advises; and whether the store's table is
 * there, asked with one `DescribeTable`.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { isInvalidOptionsError } from '../core/errors.js';
import type { DynamoDbStore } from '../stores/dynamodb/index.js';
import { CommandFailed, UsageError } from './errors.js';
import { requirePeer } from './peer.js';

type Sdk = typeof import('@aws-sdk/client-dynamodb');

export interface OpenedDynamoDb {
  readonly client: DynamoDBClient;
  /** The region the SDK resolved. */
  readonly region: string;
  readonly sdk: Sdk;
}

/**
 * docs/stores/dynamodb.md: without `throwOnRequestTimeout` the SDK's `requestTimeout` only logs, and a call to an
 * endpoint that stops answering (a firewall that drops packets) never ends. 10 s, as the CLI's other connections.
 */
const REQUEST_TIMEOUT_MS = 10_000;

/** A client for a command, or a one-line failure: the SDK missing, or no region to send to. */
export async function openDynamoDb(): Promise<OpenedDynamoDb> {
  const sdk = await requirePeer<Sdk>('@aws-sdk/client-dynamodb');
  const client = new sdk.DynamoDBClient({
    requestHandler: { requestTimeout: REQUEST_TIMEOUT_MS, throwOnRequestTimeout: true },
  });
  try {
    // Resolved now rather than at the first call, whose "Region is missing" would name no variable to set.
    return { client, region: await client.config.region(), sdk };
  } catch {
    client.destroy();
    throw new UsageError(
      'DynamoDB needs a region: set AWS_REGION (or AWS_PROFILE, naming a profile that has one)',
    );
  }
}

/** The store on `table` (the store's default when not given), the name checked by the store itself. */
export async function dynamoDbStoreOn(
  opened: OpenedDynamoDb,
  table: string | undefined,
): Promise<DynamoDbStore> {
  // Imported only now: the store's module imports the SDK, which openDynamoDb found.
  const { DynamoDbStore } = await import('../stores/dynamodb/index.js');
  try {
    return new DynamoDbStore({ client: opened.client, ...(table === undefined ? {} : { table }) });
  } catch (error) {
    if (isInvalidOptionsError(error))
      throw new UsageError(`--table "${table}" is not valid: ${error.message}`);
    throw error;
  }
}

export interface DynamoDbTable {
  /** True when the table exists. */
  readonly found: boolean;
  /** Where the SDK sent the call (`https://dynamodb.eu-west-1.amazonaws.com`) and the region, for messages. */
  readonly shown: string;
}

/**
 * Asks for the table with one `DescribeTable` (the call `stats` makes anyway): a table that is not there is an
 * answer; any other failure (credentials, an endpoint that refuses or does not answer) is the command's failure.
 */
export async function describeDynamoDbTable(opened: OpenedDynamoDb, table: string): Promise<DynamoDbTable> {
  const command = new opened.sdk.DescribeTableCommand({ TableName: table });
  let endpoint = '';
  // The endpoint as the SDK resolved it (from the environment, a profile or the region), read off the request.
  command.middlewareStack.add(
    (next) => (args) => {
      const request = args.request as { protocol?: string; hostname?: string; port?: number } | undefined;
      if (request?.hostname !== undefined)
        endpoint = `${request.protocol ?? 'https:'}//${request.hostname}${request.port ? `:${request.port}` : ''}`;
      return next(args);
    },
    { step: 'build', name: 'oncelyCliEndpoint' },
  );
  const where = () => (endpoint === '' ? opened.region : `${endpoint} (${opened.region})`);
  try {
    await opened.client.send(command);
    return { found: true, shown: where() };
  } catch (error) {
    const name = error instanceof Error ? error.name : 'Error';
    if (name === 'ResourceNotFoundException') return { found: false, shown: where() };
    throw new CommandFailed(
      `cannot reach DynamoDB at ${where()} (${name}: ${(error as Error).message}); check AWS_REGION, the credentials ` +
        '(AWS_PROFILE, AWS_ACCESS_KEY_ID) and AWS_ENDPOINT_URL_DYNAMODB, or start the endpoint',
    );
  }
}

/**
 * Fails with the migrate hint when the table is missing: commands that read or maintain records never create
 * anything, and creating the table belongs to `oncely migrate --store dynamodb`.
 */
export async function requireDynamoDbTable(
  opened: OpenedDynamoDb,
  table: string,
  flags: readonly string[],
): Promise<string> {
  const { found, shown } = await describeDynamoDbTable(opened, table);
  if (found) return shown;
  throw new CommandFailed(
    `there is no table ${table} in DynamoDB at ${shown}; run: ${['oncely migrate --store dynamodb', ...flags].join(' ')}`,
  );
}
