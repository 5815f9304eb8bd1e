/**
 * @module The parts of AWS Lambda's event, result and context shapes that oncely reads, declared here rather than
 * taken from `@types/aws-lambda`: users who do not install those types are not made to, and those who do pass their
 * `APIGatewayProxyEvent`, `APIGatewayProxyEventV2`, `LambdaFunctionURLEvent`, `SQSEvent` and `Context` as they are
 * (`test/lambda/types.test.ts` checks each against the real declarations). Every field read is optional where AWS
 * may leave it out, and nullable where AWS sends `null`.
 */

type Headers = Readonly<Record<string, string | undefined>>;
type MultiValue = Readonly<Record<string, readonly string[] | undefined>>;
type HeaderValue = boolean | number | string;

/** What the layer reads of a Lambda context: the time left before the invocation times out. */
export interface LambdaContext {
  getRemainingTimeInMillis(): number;
}

/** API Gateway REST API (payload format 1.0) proxy event. */
export interface RestApiEvent {
  readonly httpMethod: string;
  /** The path without the stage (`/orders/42`). */
  readonly path: string;
  /** The resource template (`/orders/{id}`), the route of the default scope. */
  readonly resource?: string | null;
  readonly headers?: Headers | null;
  /** Every line of every header: the layer counts `Idempotency-Key` lines here. */
  readonly multiValueHeaders?: MultiValue | null;
  readonly queryStringParameters?: Headers | null;
  readonly multiValueQueryStringParameters?: MultiValue | null;
  readonly body?: string | null;
  readonly isBase64Encoded?: boolean;
  readonly requestContext?: {
    readonly identity?: {
      readonly userArn?: string | null;
      readonly cognitoIdentityId?: string | null;
    } | null;
    /** A Lambda authorizer's `principalId`, or a Cognito authorizer's `claims`. */
    readonly authorizer?: unknown;
  };
}

/** HTTP API (payload format 2.0) and Lambda Function URL event. */
export interface HttpApiEvent {
  readonly version?: string;
  /** `POST /orders/{id}`, or `$default` (Function URLs and catch-all routes). */
  readonly routeKey?: string;
  readonly rawPath: string;
  readonly rawQueryString?: string;
  /** Format 2.0 moves the `Cookie` header here, one entry per cookie. */
  readonly cookies?: readonly string[];
  /** Lower-case names; repeated lines joined by commas. */
  readonly headers?: Headers;
  readonly body?: string;
  readonly isBase64Encoded?: boolean;
  readonly requestContext: {
    readonly http: { readonly method: string };
    /** `jwt.claims`, `iam.userArn` or `lambda` (the authorizer's context). */
    readonly authorizer?: unknown;
  };
}

export type HttpEvent = RestApiEvent | HttpApiEvent;

/** What a REST API (format 1.0) handler returns. */
export interface RestApiResult {
  statusCode: number;
  headers?: Record<string, HeaderValue> | undefined;
  multiValueHeaders?: Record<string, HeaderValue[]> | undefined;
  body: string;
  isBase64Encoded?: boolean | undefined;
}

/**
 * What an HTTP API or Function URL (format 2.0) handler returns when it sets the status itself. It may return any
 * other JSON value instead: API Gateway then answers 200 `application/json` with that value as the body.
 */
export interface HttpApiResult {
  statusCode?: number | undefined;
  headers?: Record<string, HeaderValue> | undefined;
  body?: string | undefined;
  isBase64Encoded?: boolean | undefined;
  /** Each becomes a `Set-Cookie` line. */
  cookies?: string[] | undefined;
}

/** The answers the layer gives on its own (replays, 4xx, 503), in the format of the event they answer. */
export type AnswerFor<E> = E extends { readonly httpMethod: string } ? RestApiResult : HttpApiResult;

/** One SQS message as the Lambda event source mapping delivers it. */
export interface SqsRecord {
  readonly messageId: string;
  readonly body: string;
  readonly attributes?: {
    /** `"1"` on the first delivery. */
    readonly ApproximateReceiveCount?: string;
    readonly MessageGroupId?: string | undefined;
  };
  /** Ends in `.fifo` for a FIFO queue. */
  readonly eventSourceARN?: string;
}

export interface SqsEvent {
  readonly Records: readonly SqsRecord[];
}

/** The partial batch response (`ReportBatchItemFailures`): the records to deliver again. */
export interface SqsBatchResponse {
  batchItemFailures: { itemIdentifier: string }[];
}
