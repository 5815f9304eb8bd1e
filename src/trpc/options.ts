/**
 * @module The options of oncely/trpc's `idempotent()` and their checks, done once when the middleware is made (bad
 * options throw `InvalidOptionsError` then, never per call).
 */
import { type Codec, structuredCodec } from '../core/codec.js';
import { ENGINE_OPTION_NAMES, type EngineOptions } from '../core/engine-options.js';
import { InvalidOptionsError } from '../core/errors.js';
import { knownOptions, optionalFunction, wholeNumber } from '../core/validate.js';
import type { HeaderSource } from './headers.js';

export interface TrpcIdempotencyOptions<TInput, TContext> extends EngineOptions {
  /**
   * The key from the procedure's input (an order id, a client-made key field); when it returns undefined, the
   * header is read. Give `key`, `headers`, or both.
   */
  readonly key?: (input: TInput) => string | undefined;
  /** The request's headers from the context, for the `Idempotency-Key` header and the default scope. */
  readonly headers?: (ctx: TContext) => HeaderSource | undefined;
  /** The header that carries the key. Default `'Idempotency-Key'`. */
  readonly header?: string;
  /** A mutation without a key is refused (BAD_REQUEST) when true, or runs unprotected when false. Default true. */
  readonly required?: boolean;
  /**
   * Who the caller is: keys of different scopes never meet. Default: the `Authorization`, API-key headers and
   * session cookies of `headers(ctx)`, as the HTTP adapters read them; none without `headers`.
   */
  readonly scope?: (ctx: TContext) => string;
  /**
   * What identifies the call beyond its key, hashed as canonical JSON: the same key with another fingerprint is
   * refused (UNPROCESSABLE_CONTENT). Default: the whole input.
   */
  readonly fingerprint?: (input: TInput) => unknown;
  /** How results become bytes and back. Default `structuredCodec` (Date, Map, Set, BigInt…), transformer-neutral. */
  readonly codec?: Codec;
  /** Wait up to this many ms for a concurrent duplicate, then replay its result. Default 0: CONFLICT. */
  readonly waitMs?: number;
}

const OWN_OPTION_NAMES = [
  'key',
  'headers',
  'header',
  'required',
  'scope',
  'fingerprint',
  'codec',
  'waitMs',
] as const;

export interface ResolvedOptions<TInput, TContext> {
  readonly key: ((input: TInput) => string | undefined) | undefined;
  readonly headers: ((ctx: TContext) => HeaderSource | undefined) | undefined;
  /** Lower case. */
  readonly header: string;
  readonly required: boolean;
  readonly scope: ((ctx: TContext) => string) | undefined;
  readonly fingerprint: ((input: TInput) => unknown) | undefined;
  readonly codec: Codec;
  readonly waitMs: number;
  readonly engine: EngineOptions;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function resolveOptions<TInput, TContext>(
  options: TrpcIdempotencyOptions<TInput, TContext>,
): ResolvedOptions<TInput, TContext> {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionsError('idempotent: options are required ({ store, key or headers })');
  knownOptions('idempotent', options, [...OWN_OPTION_NAMES, ...ENGINE_OPTION_NAMES]);
  const {
    key,
    headers,
    header = 'Idempotency-Key',
    required = true,
    scope,
    fingerprint,
    codec = structuredCodec,
    waitMs,
    ...engine
  } = options;
  optionalFunction('key', key);
  optionalFunction('headers', headers);
  optionalFunction('scope', scope);
  optionalFunction('fingerprint', fingerprint);
  if (key === undefined && headers === undefined)
    throw new InvalidOptionsError(
      'idempotent: say where the key comes from: key(input), headers(ctx) for the Idempotency-Key header, or both',
    );
  if (typeof header !== 'string' || !HEADER_NAME.test(header))
    throw new InvalidOptionsError('idempotent: header must be an HTTP header name');
  if (typeof required !== 'boolean') throw new InvalidOptionsError('idempotent: required must be a boolean');
  if (codec === null || typeof codec !== 'object' || typeof codec.encode !== 'function')
    throw new InvalidOptionsError('idempotent: codec must be a Codec ({ name, encode, decode })');
  return {
    key,
    headers,
    header: header.toLowerCase(),
    required,
    scope,
    fingerprint,
    codec,
    waitMs: wholeNumber('waitMs', waitMs, 0),
    engine,
  };
}
