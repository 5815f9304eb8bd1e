/**
 * @module The names the Nest layer's pieces share: its option types, the injection token of the module's options,
 * and the metadata keys the decorators write and the interceptor reads.
 */
import type { HttpIdempotencyOptions, RouteOptions } from '../http/options.js';
import type { NestRequest } from './exchange.js';

/** The options of `OncelyModule.forRoot`: every option of the HTTP adapters (docs/http.md). */
export type OncelyModuleOptions<Req = NestRequest> = HttpIdempotencyOptions<Req>;

/** What `@Idempotent()` may override per controller or handler: the route options of docs/http.md. */
export type IdempotentRouteOptions<Req = NestRequest> = RouteOptions<Req>;

/** The injection token of the module's options (`forRoot`'s value, or what `forRootAsync`'s factory returns). */
export const ONCELY_OPTIONS: unique symbol = Symbol('oncely.options');

/** Metadata keys, on a controller class or a handler, read by the interceptor. */
export const ROUTE_METADATA = 'oncely:route';
export const STATUS_METADATA = 'oncely:status';

/** What `@Idempotent()` and `@IdempotencyStatus()` leave on a class or handler. */
export type RouteMetadata = IdempotentRouteOptions<unknown>;
