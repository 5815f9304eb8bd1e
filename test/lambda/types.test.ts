import middy from '@middy/core';
import type {
  APIGatewayProxyEvent,
  APIGatewayProxyEventV2,
  APIGatewayProxyHandler,
  APIGatewayProxyHandlerV2,
  APIGatewayProxyResult,
  APIGatewayProxyResultV2,
  Context,
  LambdaFunctionURLHandler,
  SQSEvent,
  SQSHandler,
  SQSRecord,
} from 'aws-lambda';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { MemoryStore } from '../../src/index.js';
import {
  idempotency,
  idempotencyOf,
  type LambdaIdempotencyContext,
  middyIdempotency,
  type SqsRecordContext,
  sqsIdempotency,
} from '../../src/lambda/index.js';

// oncely/lambda declares the event shapes it reads instead of depending on @types/aws-lambda: these assertions
// prove that the real declarations (and Middy's) go in and come out without a cast. `npm run typecheck` checks
// this file; at run time the assertions are no-ops and the handlers are never invoked.
const store = new MemoryStore();

describe('oncely/lambda types against @types/aws-lambda and @middy/core', () => {
  it('a wrapped REST handler is an APIGatewayProxyHandler', () => {
    const handler: APIGatewayProxyHandler = idempotency({ store })(
      async (event: APIGatewayProxyEvent, context: Context, { idempotency: claim }) => {
        expectTypeOf(claim).toEqualTypeOf<LambdaIdempotencyContext | undefined>();
        expectTypeOf(context.awsRequestId).toBeString();
        return { statusCode: 201, body: event.body ?? '' } satisfies APIGatewayProxyResult;
      },
    );
    expectTypeOf(handler).not.toBeAny();
  });

  it('a wrapped HTTP API handler is an APIGatewayProxyHandlerV2, and a Function URL handler one of its kind', () => {
    const v2: APIGatewayProxyHandlerV2 = idempotency({ store })(async (event: APIGatewayProxyEventV2) => ({
      statusCode: 201,
      body: event.rawPath,
      cookies: ['a=1'],
    }));
    const url: LambdaFunctionURLHandler<{ paid: boolean }> = idempotency({ store })(
      async (event: APIGatewayProxyEventV2) => ({
        paid: event.body !== undefined,
      }),
    );
    expectTypeOf(v2).not.toBeAny();
    expectTypeOf(url).not.toBeAny();
  });

  it('the options are typed by the event: scope and fingerprint get it', () => {
    idempotency<APIGatewayProxyEventV2>({
      store,
      scope: (event) => event.requestContext.accountId,
      fingerprint: (event) => event.body,
    });
    // @ts-expect-error longRunning is not an option on Lambda (and throws at construction)
    expect(() => idempotency({ store, longRunning: { location: (id: string) => id } })).toThrow(
      /longRunning/,
    );
  });

  it('the middleware goes into middy().use() of a typed handler; idempotencyOf reads the context', () => {
    const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
      .use(middyIdempotency({ store }))
      .handler(async (event, context) => {
        const claim = idempotencyOf(context);
        expectTypeOf(claim).toEqualTypeOf<LambdaIdempotencyContext | undefined>();
        return { statusCode: 201, body: String(claim?.token ?? event.path) };
      });
    const v2 = middy(
      async (_event: APIGatewayProxyEventV2): Promise<APIGatewayProxyResultV2> => ({ statusCode: 204 }),
    ).use(middyIdempotency<APIGatewayProxyEventV2>({ store }));
    expectTypeOf(handler).not.toBeAny();
    expectTypeOf(v2).not.toBeAny();
  });

  it('an SQS handler is an SQSHandler; the record handler gets the SQSRecord and its context', () => {
    const handler: SQSHandler = sqsIdempotency({ store })(
      async (record: SQSRecord, context: SqsRecordContext<Context>) => {
        expectTypeOf(context.token).toBeNumber();
        expectTypeOf(context.lambda.awsRequestId).toBeString();
        return record.messageAttributes;
      },
    );
    const keyed: SQSHandler = sqsIdempotency<SQSRecord>({ store, key: (record) => record.md5OfBody })(
      async () => {},
    );
    expectTypeOf<SQSEvent>().toExtend<Parameters<typeof keyed>[0]>();
    expectTypeOf(handler).not.toBeAny();
  });
});
