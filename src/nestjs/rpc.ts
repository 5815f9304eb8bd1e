/**
 * @module The Nest layer on microservice handlers (`@MessagePattern`, `@EventPattern`): a message's key from the
 * transport's `Idempotency-Key` header (NATS headers, RabbitMQ message headers) or from the route's `key` function
 * (payload and transport context), one claim in the engine per message, the handler's value stored and given back
 * to a retry, and the HTTP layer's refusals (400, 409, 422, 503) as an `RpcException` carrying the same problem.
 */
import type { ExecutionContext as NestExecutionContext } from '@nestjs/common';
import { from, lastValueFrom, type Observable } from 'rxjs';
import type { ExecutionContext } from '../core/claim.js';
import { structuredCodec } from '../core/codec.js';
import { InvalidKeyError, ResponseNotRetainedError } from '../core/errors.js';
import { canonicalJson, fingerprintOf } from '../core/fingerprint.js';
import { scopedKey } from '../core/key.js';
import { checkKeyText } from '../core/key-rules.js';
import { answerForError } from '../http/answers.js';
import type { HttpIdempotency } from '../http/flow.js';
import type { NestRequest } from './exchange.js';

// The claim of the message being handled, by the transport's context object (one per message), for
// `@IdempotencyClaim()`.
const claims = new WeakMap<object, ExecutionContext>();

/** The claim of the message whose transport context this is; undefined when the layer did not claim it. */
export function rpcClaimOf(transportContext: unknown): ExecutionContext | undefined {
  return typeof transportContext === 'object' && transportContext !== null
    ? claims.get(transportContext)
    : undefined;
}

/** What a refused message's `RpcException` carries: the HTTP layer's problem, with the wait in milliseconds. */
export interface RpcProblem {
  /** The HTTP status the same refusal has: 400, 409, 422 or 503. */
  readonly status: number;
  /** `https://…/errors.md#key-missing` and the like, as over HTTP. */
  readonly type: string;
  readonly title: string;
  readonly detail: string;
  /** How long to wait before a retry (409, 503). */
  readonly retryAfterMs?: number;
}

/**
 * Handles one microservice message on a handler `@Idempotent()` marks: claims its key, runs the handler once,
 * stores its value (structured clone rules) and returns it; a retry gets the stored value without a run. A
 * message without a key runs unprotected when the route has `required: false`.
 */
export function handleRpc(
  flow: HttpIdempotency<NestRequest>,
  context: NestExecutionContext,
  handler: () => Observable<unknown>,
): Observable<unknown> {
  return from(run(flow, context, handler));
}

async function run(
  flow: HttpIdempotency<NestRequest>,
  context: NestExecutionContext,
  handler: () => Observable<unknown>,
): Promise<unknown> {
  const rpc = context.switchToRpc();
  const data: unknown = rpc.getData();
  const transport: unknown = rpc.getContext();
  const { route, engine } = flow;
  const scope = `rpc:${context.getClass().name}.${context.getHandler().name}`;
  let key: string | undefined;
  try {
    key = keyOf(flow, transport, data);
  } catch (error) {
    throw await rpcException(error);
  }
  if (key === undefined) {
    if (!route.required) return lastValueFrom(handler(), { defaultValue: undefined });
    throw await rpcException(new InvalidKeyError('missing', 'an idempotency key is required'));
  }
  const fingerprint =
    typeof route.fingerprint === 'function'
      ? (route.fingerprint as (payload: unknown) => unknown)(data)
      : data;
  try {
    const result = await engine.execute<unknown>({
      key: scopedKey(scope, key),
      scope,
      fingerprint: fingerprintOf([canonicalJson(fingerprint)]),
      waitMs: route.waitMs,
      leaseMs: route.leaseMs,
      retentionMs: route.retentionMs,
      run: async (claim) => {
        if (typeof transport === 'object' && transport !== null) claims.set(transport, claim);
        return lastValueFrom(handler(), { defaultValue: undefined });
      },
      settle: (value) => ({
        keep: true,
        outcome: { status: 0, headers: [], body: structuredCodec.encode(value) },
      }),
    });
    if (result.kind === 'executed') return result.result;
    if (!result.outcome.retained) throw new ResponseNotRetainedError(undefined);
    return structuredCodec.decode(result.outcome.outcome.body);
  } catch (error) {
    // The layer's refusals become the transport's error answer; the handler's own errors stay its own.
    if (answerForError(error) === undefined) throw error;
    throw await rpcException(error);
  }
}

/** The key by the route's `key` function (transport context, payload), else the transport's header. */
function keyOf(flow: HttpIdempotency<NestRequest>, transport: unknown, data: unknown): string | undefined {
  const { route } = flow;
  const value = route.key
    ? (route.key as (request: unknown, body: unknown) => unknown)(transport, data)
    : headerOf(transport, route.header);
  if (value === undefined || value === null) return undefined;
  return checkKeyText(value);
}

/**
 * A header of the message, where the transport carries headers: NATS (`NatsContext.getHeaders()`, a `MsgHdrs`) and
 * RabbitMQ (`RmqContext.getMessage().properties.headers`). Redis and TCP messages have none: use `key`.
 */
function headerOf(transport: unknown, name: string): unknown {
  // NATS header names keep their case (`MsgHdrs.get` matches exactly by default): find the name in any case.
  const nats = (transport as { getHeaders?: () => unknown } | null)?.getHeaders?.() as
    | { keys?: () => string[]; get?: (header: string) => string }
    | undefined;
  if (typeof nats?.keys === 'function' && typeof nats.get === 'function') {
    for (const header of nats.keys()) if (header.toLowerCase() === name) return nats.get(header);
  }
  const rmq = (transport as { getMessage?: () => unknown } | null)?.getMessage?.() as
    | { properties?: { headers?: Record<string, unknown> } }
    | undefined;
  const headers = rmq?.properties?.headers;
  if (headers !== undefined) {
    for (const [header, value] of Object.entries(headers)) if (header.toLowerCase() === name) return value;
  }
  return undefined;
}

/** The refusal as Nest's `RpcException` (loaded only here: an HTTP-only app never needs microservices). */
async function rpcException(error: unknown): Promise<Error> {
  const answer = answerForError(error);
  if (answer === undefined) return error as Error;
  const problem = JSON.parse(Buffer.from(answer.body).toString('utf8')) as Omit<RpcProblem, 'retryAfterMs'>;
  const retryAfter = answer.headers.find(([name]) => name === 'retry-after')?.[1];
  const waitMs =
    error !== null && typeof error === 'object' && 'retryAfterMs' in error
      ? Number((error as { retryAfterMs: number }).retryAfterMs)
      : retryAfter === undefined
        ? undefined
        : Number(retryAfter) * 1000;
  const payload: RpcProblem = waitMs === undefined ? problem : { ...problem, retryAfterMs: waitMs };
  const { RpcException } = await import('@nestjs/microservices');
  return new RpcException(payload);
}
