/**
 * @module `oncely/nestjs`: the Nest module (`OncelyModule`), the `@Idempotent` route decorator, the interceptor and
 * the parameter decorators, on Nest's Express and Fastify platforms and on microservice handlers.
 */
// This file's declarations use Node's types (node:http): the directive, kept in its .d.ts, loads @types/node for
// users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
export type { DeferredResponse, DeferredWork, IdempotencyContext } from '../http/context.js';
export { IdempotencyClaim, IdempotencyStatus, Idempotent, type MessageClaim } from './decorators.js';
export type { NestRequest } from './exchange.js';
export { IdempotencyInterceptor, idempotencyContextOf } from './interceptor.js';
export { type IdempotentRouteOptions, ONCELY_OPTIONS, type OncelyModuleOptions } from './metadata.js';
export { OncelyModule, type OncelyModuleAsyncOptions } from './module.js';
export { OncelyRoutes } from './routes.js';
export type { RpcProblem } from './rpc.js';
