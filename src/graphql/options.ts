/**
 * @module The options of `useIdempotency()` and `apolloIdempotency()` (one set for both) and their checks: everything is validated once, when the plugin is
 * made (bad options throw `InvalidOptionsError` then, never per request), and resolved to the values a field's
 * resolver reads.
 */
import { type Codec, structuredCodec } from '../core/codec.js';
import { ENGINE_OPTION_NAMES, type EngineOptions } from '../core/engine-options.js';
import { InvalidOptionsError } from '../core/errors.js';
import { knownOptions, optionalFunction, wholeNumber } from '../core/validate.js';

export interface GraphQLIdempotencyOptions<TContext = unknown> extends EngineOptions {
  /**
   * The idempotent fields, by schema coordinate (`'Mutation.createPayment'`), beside those marked with the
   * directive. Each must name a field of the schema, and none a field of the query or subscription type.
   * Default none.
   */
  readonly fields?: readonly string[];
  /**
   * The directive that marks a field idempotent in SDL (`createPayment(…): Payment! @idempotent`), declared with
   * `idempotentDirective`; `false` reads no directive. Default `'idempotent'`.
   */
  readonly directive?: string | false;
  /** The field argument whose value is the key when the client passes one. Default `'idempotencyKey'`. */
  readonly keyArgument?: string;
  /** The request header whose value is the key of a field without a key argument. Default `'Idempotency-Key'`. */
  readonly header?: string;
  /**
   * An idempotent field called without a key is refused (`IDEMPOTENCY_KEY_INVALID`) when true, or runs
   * unprotected when false. Default true.
   */
  readonly required?: boolean;
  /**
   * Who the caller is: keys of different scopes never meet, so one client can never replay another's result.
   * Default: the request's `Authorization`, API-key headers and session cookies, as the HTTP adapters read them.
   */
  readonly scope?: (context: TContext) => string;
  /**
   * What identifies the call beyond its key, hashed as canonical JSON: the same key with another fingerprint is
   * refused (`IDEMPOTENCY_MISMATCH`). Default: the field's arguments without the key argument.
   */
  readonly fingerprint?: (args: Readonly<Record<string, unknown>>, context: TContext) => unknown;
  /** How a field's resolved value becomes bytes and back. Default `structuredCodec` (Date, Map, BigInt…). */
  readonly codec?: Codec;
  /** Wait up to this many ms for a concurrent duplicate, then replay its result. Default 0: `IDEMPOTENCY_CONFLICT`. */
  readonly waitMs?: number;
}

const OWN_OPTION_NAMES = [
  'fields',
  'directive',
  'keyArgument',
  'header',
  'required',
  'scope',
  'fingerprint',
  'codec',
  'waitMs',
] as const;

export interface ResolvedOptions<TContext> {
  readonly fields: readonly string[];
  readonly directive: string | undefined;
  readonly keyArgument: string;
  /** Lower case, as `Headers#get` takes it either way. */
  readonly header: string;
  readonly required: boolean;
  readonly scope: ((context: TContext) => string) | undefined;
  readonly fingerprint: GraphQLIdempotencyOptions<TContext>['fingerprint'];
  readonly codec: Codec;
  readonly waitMs: number;
  readonly engine: EngineOptions;
}

// A schema coordinate of a field (graphql-js names: letters, digits, underscores, not starting with a digit).
const COORDINATE = /^[_A-Za-z][_0-9A-Za-z]*\.[_A-Za-z][_0-9A-Za-z]*$/;
const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Checks `options` once, for the factory called `name` (which every refusal's message starts with). */
export function resolveOptions<TContext>(
  options: GraphQLIdempotencyOptions<TContext>,
  name: string,
): ResolvedOptions<TContext> {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionsError(`${name}: options are required ({ store })`);
  knownOptions(name, options, [...OWN_OPTION_NAMES, ...ENGINE_OPTION_NAMES]);
  const {
    fields = [],
    directive = 'idempotent',
    keyArgument = 'idempotencyKey',
    header = 'Idempotency-Key',
    required = true,
    scope,
    fingerprint,
    codec = structuredCodec,
    waitMs,
    ...engine
  } = options;
  if (!Array.isArray(fields) || fields.some((field) => typeof field !== 'string' || !COORDINATE.test(field)))
    throw new InvalidOptionsError(
      `${name}: fields must be schema coordinates of fields, such as 'Mutation.createPayment'`,
    );
  if (directive !== false && (typeof directive !== 'string' || !NAME.test(directive)))
    throw new InvalidOptionsError(`${name}: directive must be a GraphQL name (without @) or false`);
  if (typeof keyArgument !== 'string' || !NAME.test(keyArgument))
    throw new InvalidOptionsError(`${name}: keyArgument must be a GraphQL argument name`);
  if (typeof header !== 'string' || !HEADER_NAME.test(header))
    throw new InvalidOptionsError(`${name}: header must be an HTTP header name`);
  if (typeof required !== 'boolean') throw new InvalidOptionsError(`${name}: required must be a boolean`);
  optionalFunction(`${name}: scope`, scope);
  optionalFunction(`${name}: fingerprint`, fingerprint);
  if (codec === null || typeof codec !== 'object' || typeof codec.encode !== 'function')
    throw new InvalidOptionsError(`${name}: codec must be a Codec ({ name, encode, decode })`);
  return {
    fields,
    directive: directive === false ? undefined : directive,
    keyArgument,
    header: header.toLowerCase(),
    required,
    scope,
    fingerprint,
    codec,
    waitMs: wholeNumber(`${name}: waitMs`, waitMs, 0),
    engine,
  };
}
