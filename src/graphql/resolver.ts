/**
 * @module One idempotent field's resolver: the key (the field's key argument, else the request's header), the
 * record it names (scoped by the field, the caller and, for a header key, the field's response path), the
 * fingerprint of its arguments, and the engine's walk: run the resolver once and store its value, replay the value
 * to a retry, refuse a busy key or other arguments with a GraphQL error on this field alone.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { GraphQLFieldResolver, GraphQLResolveInfo } from 'graphql';
import type { ExecutionContext } from '../core/claim.js';
import type { Engine } from '../core/engine.js';
import { InvalidKeyError, ResponseNotRetainedError } from '../core/errors.js';
import { canonicalJson, fingerprintOf } from '../core/fingerprint.js';
import { scopedKey, validateKey } from '../core/key.js';
import { parseKeyHeader } from '../http/key-header.js';
import { defaultScope } from '../http/scope.js';
import type { RequestHeaders, ServerBinding } from './binding.js';
import { graphqlErrorFor } from './errors.js';
import type { IdempotentField } from './fields.js';
import type { ResolvedOptions } from './options.js';

const claims = new AsyncLocalStorage<ExecutionContext>();

/**
 * The claim of the idempotent field whose resolver is running in this async context (`token`, `attempt`,
 * `takeover`, `signal`); undefined elsewhere. Pass the token to downstream writes, so a stalled resolver whose
 * lease ran out is fenced off.
 */
export function currentClaim(): ExecutionContext | undefined {
  return claims.getStore();
}

// graphql's resolver type, whose source, context and args are any: the plugin wraps every kind of field.
// biome-ignore lint/suspicious/noExplicitAny: GraphQLFieldResolver's defaults are any
type AnyResolver = GraphQLFieldResolver<any, any, any, unknown>;

/**
 * `resolve`, made idempotent for mutations under `options`, on the server `binding` describes; queries and
 * subscriptions reach it unchanged.
 */
export function idempotentResolver<TContext>(
  { coordinate, field }: IdempotentField,
  resolve: AnyResolver,
  engine: Engine,
  options: ResolvedOptions<TContext>,
  binding: ServerBinding,
): AnyResolver {
  const label = `graphql:${coordinate}`;
  const hasKeyArgument = field.args.some((argument) => argument.name === options.keyArgument);
  const { codec, keyArgument, waitMs } = options;
  const missingKeyMessage = hasKeyArgument
    ? `${coordinate} needs an idempotency key: its ${keyArgument} argument or the ${options.header} header`
    : `${coordinate} needs an idempotency key: the ${options.header} header`;

  return async function idempotentField(source, args: Record<string, unknown>, context, info) {
    // A field of a type reachable from a query too (a namespace type) is only guarded in mutations.
    if (info.operation.operation !== 'mutation') return resolve(source, args, context, info);
    const headers = binding.headers(context);
    const argumentKey = hasKeyArgument ? args[keyArgument] : undefined;
    const fromArgument = argumentKey !== undefined && argumentKey !== null;
    let key: string | undefined;
    try {
      key = fromArgument
        ? validateKey(argumentKey)
        : parseKeyHeader(headers?.get(options.header) ?? undefined);
    } catch (error) {
      throw graphqlErrorFor(error, binding.http) ?? error;
    }
    if (key === undefined) {
      if (!options.required) return resolve(source, args, context, info);
      throw graphqlErrorFor(new InvalidKeyError('missing', missingKeyMessage), binding.http);
    }
    let threw = false;
    try {
      const record = scopedKey(
        // Two fields of one document under one header key are two records: the response path tells them apart.
        `${label}\n${fromArgument ? '' : pathOf(info)}\n${identityOf(context, headers, coordinate, options)}`,
        key,
      );
      const result = await engine.execute({
        key: record,
        scope: label,
        fingerprint: fingerprintOf([canonicalJson(fingerprintValue(args, context, options))]),
        waitMs,
        run: async (claim) => {
          try {
            return await claims.run(claim, () => resolve(source, args, context, info));
          } catch (error) {
            threw = true;
            throw error;
          }
        },
        settle: (value) => ({ keep: true, outcome: { status: 0, headers: [], body: codec.encode(value) } }),
      });
      if (result.kind === 'executed') return result.result;
      if (!result.outcome.retained) throw new ResponseNotRetainedError(undefined);
      return codec.decode(result.outcome.outcome.body);
    } catch (error) {
      // The resolver's own error goes on as it threw it, whatever it is (the key was released).
      if (threw) throw error;
      throw graphqlErrorFor(error, binding.http) ?? error;
    }
  };
}

/** The field's response path (aliases, list indices), as `createPayment` or `payments.0.create`. */
function pathOf(info: GraphQLResolveInfo): string {
  const keys: (string | number)[] = [];
  for (let path: GraphQLResolveInfo['path'] | undefined = info.path; path; path = path.prev)
    keys.push(path.key);
  return keys.reverse().join('.');
}

function identityOf<TContext>(
  context: TContext,
  headers: RequestHeaders | undefined,
  coordinate: string,
  options: ResolvedOptions<TContext>,
): string {
  if (options.scope !== undefined) return options.scope(context);
  // The HTTP adapters' default scope, read from the request that carried the operation: one copy of its rules.
  return defaultScope({
    request: undefined,
    method: 'MUTATION',
    route: coordinate,
    target: coordinate,
    header: (name) => headers?.get(name) ?? undefined,
    bodyBytes: undefined,
    parsedBody: undefined,
  });
}

function fingerprintValue<TContext>(
  args: Record<string, unknown>,
  context: TContext,
  options: ResolvedOptions<TContext>,
): unknown {
  if (options.fingerprint !== undefined) return options.fingerprint(args, context);
  if (!(options.keyArgument in args)) return args;
  const { [options.keyArgument]: _key, ...rest } = args;
  return rest;
}
