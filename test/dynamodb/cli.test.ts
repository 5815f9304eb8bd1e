/**
 * Test (CLI on DynamoDB): `oncely migrate|stats|inspect|purge|dashboard --store dynamodb` against dynalite, reached
 * as the AWS SDK reaches any endpoint from the environment (AWS_REGION, the credentials' variables, and
 * AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL): the table made by migrate, its records read and deleted, the
 * page and its JSON served, the missing table, region and SDK each a one-line answer, and flags of other stores
 * refused.
 */
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dashboardCommand } from '../../src/cli/commands/dashboard.js';
import { inspect } from '../../src/cli/commands/inspect.js';
import { migrate } from '../../src/cli/commands/migrate.js';
import { purge } from '../../src/cli/commands/purge.js';
import { stats } from '../../src/cli/commands/stats.js';
import { DynamoDbStore } from '../../src/stores/dynamodb/index.js';
import {
  command,
  expectCleanFailure,
  hidingPackages,
  oncely,
  type ServingCli,
  serveCli,
  sourceCli,
} from '../cli/support/cli.js';
import { completePayment, expectDashboardShowsPayment, PAYMENT } from '../cli/support/payment-record.js';
import { type Backend, CREDENTIALS, returnItemOnRefusal, startDynalite } from './support/dynalite.js';

// The CLI from its sources, as test/mysql/cli.test.ts runs it (`npm run build` is the lead's): spawned for exit
// codes, messages and the served page, in this process where only the work is checked (each spawn costs seconds).
const TABLE = 'cli_keys';
let backend: Backend;
let silent: Server;

/** The environment the AWS SDK reads, pointed at dynalite; nothing of the machine's AWS set-up leaks in. */
function awsEnv(overrides: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: backend.endpoint,
    AWS_ENDPOINT_URL: undefined,
    AWS_PROFILE: undefined,
    AWS_SESSION_TOKEN: undefined,
    AWS_CONFIG_FILE: '/nonexistent/aws-config',
    AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/aws-credentials',
    // The SDK's notice on Node 20 (its releases from 2027 need Node 22), a warning on stderr before any output.
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...overrides,
  };
}

const cli = (
  args: readonly string[],
  overrides: Record<string, string | undefined> = {},
  entry = sourceCli,
) => oncely(args, awsEnv(overrides), 30_000, entry);

/** A command in this process, under the CLI's environment. */
async function inProcess(
  run: (argv: readonly string[]) => Promise<void>,
  argv: readonly string[],
  overrides: Record<string, string | undefined> = {},
): Promise<string> {
  for (const [name, value] of Object.entries(awsEnv(overrides))) vi.stubEnv(name, value);
  try {
    return await command(run, argv);
  } finally {
    vi.unstubAllEnvs();
  }
}

beforeAll(async () => {
  backend = await startDynalite();
  returnItemOnRefusal(true); // as DynamoDB answers a refused write
  // A server that takes connections and never answers: an endpoint behind a firewall that drops the replies.
  silent = createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  silent?.close();
  await backend?.close();
});

describe('oncely CLI with --store dynamodb', () => {
  const key = PAYMENT.hashed;

  it('stats on a table not created yet fails, naming the endpoint the SDK chose and the command to run', async () => {
    const result = await cli(['stats', '--store', 'dynamodb', '--table', TABLE]);
    expectCleanFailure(
      result,
      1,
      new RegExp(
        `^oncely: there is no table ${TABLE} in DynamoDB at ${backend.endpoint} \\(us-east-1\\); run: oncely migrate --store dynamodb --table ${TABLE}\\n$`,
      ),
    );
    // The dashboard opens the store the same way, before it listens.
    await expect(
      inProcess(dashboardCommand, ['--store', 'dynamodb', '--table', 'absent_keys', '--port', '0']),
    ).rejects.toThrow(
      /^there is no table absent_keys in DynamoDB at .*; run: oncely migrate --store dynamodb --table absent_keys$/,
    );
  });

  it('migrate creates the table through the store; stats, inspect and purge then read and maintain it', async () => {
    expect(await inProcess(migrate, ['--store', 'dynamodb', '--table', TABLE])).toBe(
      `migrated dynamodb ${backend.endpoint} (us-east-1): ${TABLE} created, no TTL (this endpoint has no TTL API; expired records stay as items, read as expired)\n`,
    );
    // Idempotent, and the generic AWS_ENDPOINT_URL reaches the same endpoint (the SDK reads both).
    expect(
      await inProcess(migrate, ['--store', 'dynamodb', '--table', TABLE], {
        AWS_ENDPOINT_URL_DYNAMODB: undefined,
        AWS_ENDPOINT_URL: backend.endpoint,
      }),
    ).toMatch(new RegExp(`^migrated dynamodb ${backend.endpoint} \\(us-east-1\\): ${TABLE} was there, `));

    await completePayment(new DynamoDbStore({ client: backend.client, table: TABLE }));

    // DescribeTable's figures (dynalite reports 0 items; DynamoDB refreshes them about every six hours).
    const counted = await inProcess(stats, ['--store', 'dynamodb', '--table', TABLE]);
    expect(counted).toMatch(
      new RegExp(`\\ndynamodb ${backend.endpoint} \\(us-east-1\\)\\s+\\d+\\s+-\\s+-\\s+-\\s+\\d+\\n$`),
    );

    const inspected = await inProcess(inspect, [
      '--store',
      'dynamodb',
      '--table',
      TABLE,
      '--key',
      PAYMENT.key,
      '--scope',
      PAYMENT.scope,
    ]);
    expect(inspected).toContain('POST /payments');
    expect(inspected).toContain('completed');
    expect(inspected).toContain('pay_cli');

    expect(await inProcess(purge, ['--store', 'dynamodb', '--table', TABLE])).toBe(
      'dynamodb expires records by itself; nothing to purge\n',
    );
  });

  it('dashboard --store dynamodb serves the page and its JSON from the table', async () => {
    let serving: ServingCli | undefined;
    try {
      serving = await serveCli(
        ['dashboard', '--store', 'dynamodb', '--table', TABLE, '--port', '0'],
        awsEnv(),
        sourceCli,
      );
      await expectDashboardShowsPayment(serving.url, 'dynamodb');
    } finally {
      await serving?.stop();
    }
  });

  it('inspect --delete removes the record, so the next request with the key runs again', async () => {
    const deleted = await inProcess(inspect, [
      '--store',
      'dynamodb',
      '--table',
      TABLE,
      '--hashed',
      key,
      '--delete',
    ]);
    expect(deleted).toContain('deleted: the next request with this key runs again');
    expect(await new DynamoDbStore({ client: backend.client, table: TABLE }).get(key)).toBeUndefined();
  });

  it('without @aws-sdk/client-dynamodb installed, says which package to install', async () => {
    const result = await cli(['stats', '--store', 'dynamodb'], {}, [
      ...hidingPackages(['@aws-sdk/client-dynamodb']),
      ...sourceCli,
    ]);
    expectCleanFailure(
      result,
      2,
      /^oncely: this command needs the "@aws-sdk\/client-dynamodb" package: npm install @aws-sdk\/client-dynamodb\n$/,
    );
  });

  it('no region, an endpoint that refuses and one that never answers: one line each, never a hang', async () => {
    expectCleanFailure(
      await cli(['inspect', '--store', 'dynamodb', '--hashed', key], { AWS_REGION: undefined }),
      2,
      /^oncely: DynamoDB needs a region: set AWS_REGION/,
    );
    const refused = await inProcess(stats, ['--store', 'dynamodb'], {
      AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:1',
      AWS_MAX_ATTEMPTS: '1',
    }).catch((error: Error) => error.message);
    expect(refused).toMatch(
      /^cannot reach DynamoDB at http:\/\/127\.0\.0\.1:1 \(us-east-1\) \(\w+: .*ECONNREFUSED.*\); check AWS_REGION/,
    );
    // The request timeout the store's page advises (10 s): without it this call never ends, and the test times out.
    const { port } = silent.address() as { port: number };
    const hung = await inProcess(stats, ['--store', 'dynamodb'], {
      AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${port}`,
      AWS_MAX_ATTEMPTS: '1',
    }).catch((error: Error) => error.message);
    expect(hung).toMatch(/^cannot reach DynamoDB at .* \(TimeoutError: .*requestTimeout/);
  });

  it('refuses flags of other stores, a bad table name and --print as usage errors', async () => {
    expectCleanFailure(
      await cli(['stats', '--store', 'dynamodb', '--schema', 'app']),
      2,
      /^oncely: --schema goes with --store postgres; DynamoDB takes --table\n$/,
    );
    await expect(
      inProcess(inspect, ['--store', 'dynamodb', '--prefix', 'p', '--hashed', key]),
    ).rejects.toThrow(/^--prefix goes with --store redis; DynamoDB takes --table$/);
    await expect(inProcess(migrate, ['--store', 'dynamodb', '--schema', 'app'])).rejects.toThrow(
      /^--schema goes with PostgreSQL; DynamoDB takes --table$/,
    );
    await expect(inProcess(migrate, ['--store', 'dynamodb', '--print'])).rejects.toThrow(
      /^--print goes with PostgreSQL and MySQL: a DynamoDB table has no DDL/,
    );
    await expect(inProcess(stats, ['--store', 'dynamodb', '--table', 'a b'])).rejects.toThrow(
      /^--table "a b" is not valid: dynamodb: table must be 3 to 255/,
    );
    await expect(
      inProcess(dashboardCommand, ['--store', 'dynamodb', '--table', TABLE, '--outbox']),
    ).rejects.toThrow(/^dashboard: --outbox goes with --store redis/);
    await expect(inProcess(stats, ['--store', 'dynamo'])).rejects.toThrow(
      /--store must be one of redis, postgres, mysql, dynamodb/,
    );
  });
});
