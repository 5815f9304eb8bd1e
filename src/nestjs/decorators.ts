/**
 * @module The Nest layer's decorators: `@Idempotent()` to mark handlers or controllers, `@IdempotencyStatus()` for
 * the status route of long-running requests, and `@IdempotencyClaim()` to hand a handler its claim.
 */
import { applyDecorators, createParamDecorator, SetMetadata, UseInterceptors } from '@nestjs/common';
import type { ExecutionContext } from '../core/claim.js';
import { InvalidOptionsError } from '../core/errors.js';
import { knownOptions } from '../core/validate.js';
import type { IdempotencyContext } from '../http/context.js';
import { ROUTE_OPTION_NAMES } from '../http/options.js';
import type { NestRequest } from './exchange.js';
import { IdempotencyInterceptor, idempotencyContextOf } from './interceptor.js';
import { type IdempotentRouteOptions, ROUTE_METADATA, STATUS_METADATA } from './metadata.js';
import { rpcClaimOf } from './rpc.js';

/**
 * Marks a handler, or every handler of a controller, as idempotent: unsafe methods (POST and PATCH by default)
 * need an `Idempotency-Key`, the first request runs, retries get its stored response back byte for byte with
 * `Idempotent-Replayed: true`. `options` override the module's route options (a handler's over its controller's).
 * Option names are checked here, their values when the application initializes.
 *
 * @example
 * @Controller('payments')
 * export class PaymentsController {
 *   @Post()
 *   @Idempotent()
 *   create(@Body() body: NewPayment, @IdempotencyClaim() claim: IdempotencyContext) {
 *     return this.payments.charge(body, claim.token);
 *   }
 * }
 */
export function Idempotent<Req = NestRequest>(
  options: IdempotentRouteOptions<Req> = {},
): ClassDecorator & MethodDecorator {
  checkNames('@Idempotent', options);
  return applyDecorators(SetMetadata(ROUTE_METADATA, options), UseInterceptors(IdempotencyInterceptor));
}

/**
 * Makes a GET handler the status route of long-running requests (routes with `longRunning`, whose handlers
 * `defer`): it answers 202 while the work runs, the stored response once it is done, 404 otherwise, from the route
 * parameter `id`. The handler's body never runs: `@Get('operations/:id') @IdempotencyStatus() status() {}`.
 */
export function IdempotencyStatus<Req = NestRequest>(
  options: IdempotentRouteOptions<Req> = {},
): MethodDecorator {
  checkNames('@IdempotencyStatus', options);
  return applyDecorators(SetMetadata(STATUS_METADATA, options), UseInterceptors(IdempotencyInterceptor));
}

/**
 * The handler's idempotency context (`token`, `signal`, `attempt`, `skipStorage()`, `retainFor(ms)`, `defer(work)`)
 * as a parameter: undefined for requests that are not the layer's business (safe methods, no key where none is
 * required). On a microservice handler, its `MessageClaim` (`token`, `signal`, `attempt`, `takeover`).
 */
export const IdempotencyClaim: () => ParameterDecorator = createParamDecorator(
  (_data: unknown, context): IdempotencyContext | MessageClaim | undefined =>
    context.getType() === 'rpc'
      ? rpcClaimOf(context.switchToRpc().getContext())
      : idempotencyContextOf(context.switchToHttp().getRequest<object>()),
);

/**
 * What `@IdempotencyClaim()` gives a microservice handler (`@MessagePattern`, `@EventPattern`): the claim's fencing
 * `token`, its `signal` (aborted if the claim is lost), `attempt` and `takeover`.
 */
export type MessageClaim = ExecutionContext;

function checkNames(what: string, options: unknown): void {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionsError(`${what}: options must be an object of route options`);
  knownOptions(what, options, ROUTE_OPTION_NAMES);
}
