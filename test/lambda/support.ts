/**
 * @module What the Lambda suites send and call: AWS's sample events with each case's key, body and principal, a
 * Lambda context, the two entries (the wrapper, Middy), and stores that are down. The stores the suites run on
 * are the shared setups of test/support/stores.ts.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import middy from '@middy/core';
import type {
  APIGatewayProxyEvent,
  APIGatewayProxyEventV2,
  Context,
  LambdaFunctionURLEvent,
  SQSEvent,
  SQSRecord,
} from 'aws-lambda';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { Store } from '../../src/index.js';
import {
  type HttpEvent,
  idempotency,
  idempotencyOf,
  type LambdaHandlerExtras,
  type LambdaIdempotencyOptions,
  middyIdempotency,
} from '../../src/lambda/index.js';
import { DynamoDbStore } from '../../src/stores/dynamodb/index.js';
import { MySqlStore } from '../../src/stores/mysql/index.js';
import { PostgresStore } from '../../src/stores/postgres/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { clientFor } from '../dynamodb/support/dynalite.js';
import { freePort } from '../support/free-port.js';

// Events are AWS's documented sample events (fixtures/*.json: API Gateway REST proxy, HTTP API payload 2.0,
// Function URL, SQS), with the key, body and identity of each case set on a copy.

const fixture = <T>(name: string): T =>
  JSON.parse(readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8')) as T;

export type Source = 'rest' | 'http-api' | 'function-url';
export const SOURCES: readonly Source[] = ['rest', 'http-api', 'function-url'];
export type SourceEvent = APIGatewayProxyEvent | APIGatewayProxyEventV2 | LambdaFunctionURLEvent;

export interface EventInput {
  /** `Idempotency-Key` lines: one string, several (REST counts lines), or none. */
  readonly key?: string | readonly string[];
  readonly body?: string;
  readonly base64?: boolean;
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** The principal API Gateway authenticated: an IAM user ARN. */
  readonly userArn?: string;
}

/** A copy of the source's sample event with this case's method, key, body, headers and principal. */
export function eventOf(source: Source, input: EventInput = {}): SourceEvent {
  const keys = input.key === undefined ? [] : typeof input.key === 'string' ? [input.key] : input.key;
  if (source === 'rest') {
    const event = fixture<APIGatewayProxyEvent>('api-gateway-rest');
    event.httpMethod = input.method ?? 'POST';
    for (const [name, value] of Object.entries({ ...input.headers })) {
      event.headers[name] = value;
      event.multiValueHeaders[name] = [value];
    }
    if (keys.length > 0) {
      event.headers['Idempotency-Key'] = keys.at(-1);
      event.multiValueHeaders['Idempotency-Key'] = [...keys];
    }
    if (input.body !== undefined) event.body = input.body;
    event.isBase64Encoded = input.base64 === true;
    if (input.userArn !== undefined) event.requestContext.identity.userArn = input.userArn;
    return event;
  }
  const event = fixture<APIGatewayProxyEventV2>(source === 'http-api' ? 'http-api-v2' : 'function-url');
  event.requestContext.http.method = input.method ?? 'POST';
  if (source === 'http-api' && event.routeKey !== '$default')
    event.routeKey = `${input.method ?? 'POST'} /payments`;
  for (const [name, value] of Object.entries({ ...input.headers })) event.headers[name.toLowerCase()] = value;
  // Format 2.0 joins repeated lines with commas.
  if (keys.length > 0) event.headers['idempotency-key'] = keys.join(',');
  if (input.body !== undefined) event.body = input.body;
  event.isBase64Encoded = input.base64 === true;
  const context = event.requestContext as unknown as { authorizer?: unknown };
  if (input.userArn !== undefined) context.authorizer = { iam: { userArn: input.userArn } };
  else if (source === 'function-url') context.authorizer = undefined; // an AuthType NONE URL
  return event;
}

/** A Lambda context (AWS's fields) whose invocation times out `remainingMs` from now. */
export function contextOf(remainingMs = 30_000): Context {
  const deadline = Date.now() + remainingMs;
  return {
    ...fixture<Omit<Context, 'getRemainingTimeInMillis'>>('context'),
    awsRequestId: randomUUID(),
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  } as Context;
}

/** The SQS sample event with these message ids (and bodies), each delivered for the `receiveCount`-th time. */
export function sqsEventOf(
  messages: readonly { readonly id: string; readonly body?: string }[],
  { receiveCount = 1, fifo = false }: { receiveCount?: number; fifo?: boolean } = {},
): SQSEvent {
  const [sample] = fixture<SQSEvent>('sqs').Records as [SQSRecord];
  return {
    Records: messages.map(({ id, body }) => ({
      ...sample,
      messageId: id,
      body: body ?? sample.body,
      attributes: { ...sample.attributes, ApproximateReceiveCount: String(receiveCount) },
      eventSourceARN: fifo ? `${sample.eventSourceARN}.fifo` : sample.eventSourceARN,
    })),
  };
}

export type Entry = 'wrapper' | 'middy';
export const ENTRIES: readonly Entry[] = ['wrapper', 'middy'];
export type TestHandler = (
  event: SourceEvent,
  context: Context,
  extras: LambdaHandlerExtras,
) => Promise<unknown>;
export type Invoke = (event: SourceEvent, context?: Context) => Promise<unknown>;

/** The handler behind the wrapper, or behind Middy with the middleware (the context through `idempotencyOf`). */
export function entryOf(
  entry: Entry,
  options: LambdaIdempotencyOptions<HttpEvent>,
  handler: TestHandler,
): Invoke {
  if (entry === 'wrapper') {
    const wrapped = idempotency(options)(handler);
    return (event, context = contextOf()) => wrapped(event, context);
  }
  const handled = middy(async (event: SourceEvent, context: Context) =>
    handler(event, context, { idempotency: idempotencyOf(context) }),
  ).use(middyIdempotency(options));
  return (event, context = contextOf()) => handled(event, context);
}

/**
 * The stores that are down, one of each kind: real clients (ioredis, pg, mysql2, the AWS SDK) pointed at a port
 * that was just opened and closed again, so nothing listens there and every call is refused.
 */
export async function downStores(): Promise<Record<DownStore, Store> & { close(): Promise<void> }> {
  const port = await freePort();
  const client = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
  });
  client.on('error', () => {});
  const pool = new pg.Pool({ host: '127.0.0.1', port, user: 'postgres', database: 'test', max: 1 });
  pool.on('error', () => {});
  const mysqlPool = mysql.createPool({ uri: `mysql://root@127.0.0.1:${port}/test`, connectionLimit: 1 });
  const dynamo = clientFor(`http://127.0.0.1:${port}`, {
    requestHandler: { requestTimeout: 1_000, throwOnRequestTimeout: true },
  });
  return {
    redis: new RedisStore({ client }),
    postgres: new PostgresStore({ pool }),
    mysql: new MySqlStore({ pool: mysqlPool }),
    dynamodb: new DynamoDbStore({ client: dynamo }),
    close: async () => {
      client.disconnect();
      dynamo.destroy();
      await Promise.all([pool.end(), mysqlPool.end()]);
    },
  };
}

export type DownStore = 'redis' | 'postgres' | 'mysql' | 'dynamodb';
export const DOWN_STORES: readonly DownStore[] = ['redis', 'postgres', 'mysql', 'dynamodb'];

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const unique = (label: string) => `${label}-${randomUUID()}`;
