/**
 * @module `oncely/lambda`: AWS Lambda behind API Gateway (REST and HTTP APIs) and Function URLs, as a handler wrapper
 * (`idempotency`) and a Middy middleware (`middyIdempotency`), and SQS batches with per-record idempotency and the
 * partial batch response (`sqsIdempotency`). No runtime dependency: `@middy/core` is an optional peer, and the
 * event types are declared here (compatible with `@types/aws-lambda`).
 */
// This file's declarations use AbortSignal (the claim's signal): the directive, kept in its .d.ts, loads it from
// @types/node for projects whose tsconfig does not list @types/node (TypeScript 6+ lists none by default).
/// <reference types="node" preserve="true" />
export type {
  AnswerFor,
  HttpApiEvent,
  HttpApiResult,
  HttpEvent,
  LambdaContext,
  RestApiEvent,
  RestApiResult,
  SqsBatchResponse,
  SqsEvent,
  SqsRecord,
} from './events.js';
export {
  idempotency,
  type LambdaHandlerExtras,
  type LambdaHttpHandler,
  type LambdaIdempotency,
  type WrappedHttpHandler,
} from './http.js';
export {
  idempotencyOf,
  type LambdaIdempotencyContext,
  type LambdaIdempotencyOptions,
} from './invocation.js';
export { type MiddyIdempotency, type MiddyRequest, middyIdempotency } from './middy.js';
export {
  type SqsBatchHandler,
  type SqsIdempotencyOptions,
  type SqsRecordContext,
  type SqsRecordHandler,
  sqsIdempotency,
} from './sqs.js';
