/**
 * @module The HTTP adapters' options: the route options every adapter takes, checked once at construction, and
 * `createShared`, the engine, local cache and notices one factory call's routes share.
 */
import { storeErrorsOnly } from '../core/emit.js';
import { Engine, type EngineOptions } from '../core/engine.js';
import { ENGINE_OPTION_NAMES } from '../core/engine-options.js';
import { InvalidOptionsError } from '../core/errors.js';
import type { OncelyEvent } from '../core/events.js';
import { defaultEnvelopeOptions } from '../core/record.js';
import { knownOptions, optionalFunction, wholeNumber } from '../core/validate.js';
import { type LocalCacheOptions, LocalOutcomeCache } from './local-cache.js';
import { type LoggerOption, Notices, resolveLogger } from './notices.js';
import { defaultKeepStatus, FRAMING_HEADERS, type KeepStatus, SET_COOKIE } from './outcome-policy.js';
import type { FingerprintMode } from './request-fingerprint.js';
import { type KeyFunction, resolveKeyFunction } from './request-key.js';
import {
  API_KEY_HEADERS,
  defaultScope,
  defaultScopeWith,
  GLOBAL_SCOPE,
  type RequestView,
  type ScopeFunction,
  type ScopeNotices,
  warnGlobalScope,
} from './scope.js';

export interface LongRunningOptions {
  /** The status URL of an operation from its id (the key's URL-safe storage hash). Required. */
  readonly location: (id: string) => string;
  /** `Retry-After` of 202 answers. Default 1,000 ms. */
  readonly pollAfterMs?: number;
}

/** Options that may differ per route (Fastify's route `config.idempotency` takes exactly these). */
export interface RouteOptions<Req> {
  /** Request header that carries the key. Default `Idempotency-Key`. */
  readonly header?: string;
  /**
   * Take the key from the request itself instead of a header: a function of the framework's request and its JSON
   * body (`(req, body) => body?.orderId`), returning undefined when there is none. Same rules as the header's
   * (1-255 printable ASCII; a bad value is a 400), same scope and fingerprint. Default: the `header`.
   */
  readonly key?: KeyFunction<Req>;
  /** Methods the layer handles; others pass through untouched. Default `['POST', 'PATCH']`. */
  readonly methods?: readonly string[];
  /** Answer 400 when a handled method comes without a key. Default true; false lets it run unprotected. */
  readonly required?: boolean;
  /**
   * What, besides the key, names a record. Default: method + route + the client's identity as the request carries
   * it (`Authorization`, `X-Api-Key`, `Api-Key`, `X-Auth-Token`, `X-Access-Token`, session cookies; hashed into the
   * storage key, never stored). A function: its string instead (for example the authenticated user's id).
   * `'global'`: the key alone (a warning is printed at construction).
   */
  readonly scope?: typeof GLOBAL_SCOPE | ScopeFunction<Req>;
  /** How a request is fingerprinted. Default `'bytes'` (method, target, raw body); or `'canonical-json'`. */
  readonly fingerprint?: FingerprintMode<Req>;
  /** Whether a response with this status is stored. Default: < 500 except 408, 409, 413, 415, 425, 429. */
  readonly keep?: KeepStatus;
  /** Also store 5xx answers (Stripe's choice). Default false: a 5xx releases the key. Ignored with `keep`. */
  readonly keepServerErrors?: boolean;
  /**
   * Headers stored although they are not by default (`date`, `x-powered-by`, …). Default none. `set-cookie` and
   * framing headers are refused: a replay must never hand one client's cookies to whoever retries with its key.
   */
  readonly keepHeaders?: readonly string[];
  /** Wait up to this many ms for an in-flight duplicate and answer its response, instead of 409. Default 0. */
  readonly waitMs?: number;
  /** Claim duration for this route. Default: the engine's (30,000 ms). */
  readonly leaseMs?: number;
  /** How long this route's outcomes are replayed. Default: the engine's (86,400,000 ms). */
  readonly retentionMs?: number;
  /** Lets handlers answer 202 + `Location` and finish in the background (`defer`); see docs/http.md. */
  readonly longRunning?: LongRunningOptions;
  /** UNSAFE: run the handler unprotected when the store is unreachable, instead of 503. Default false. */
  readonly failOpen?: boolean;
}

export interface HttpIdempotencyOptions<Req> extends EngineOptions, RouteOptions<Req> {
  /** Keep completed outcomes in this process too, so hot replays skip the store. Default off. */
  readonly localCache?: boolean | LocalCacheOptions;
  /**
   * Where the layer says what an operator must know: why the store fails (once per cause, at most once a minute),
   * and once when the default scope finds no client identity. Default `console`; `false` is silent.
   */
  readonly logger?: LoggerOption;
}

export interface ResolvedRoute<Req> {
  readonly header: string;
  /** The route's key function; undefined: the key is the `header`. */
  readonly key: KeyFunction<Req> | undefined;
  readonly methods: ReadonlySet<string>;
  readonly required: boolean;
  readonly scope: (view: RequestView<Req>) => string;
  readonly fingerprint: FingerprintMode<Req>;
  readonly keep: KeepStatus;
  readonly keepHeaders: ReadonlySet<string>;
  readonly waitMs: number;
  readonly leaseMs: number;
  readonly retentionMs: number;
  readonly longRunning: Required<LongRunningOptions> | undefined;
  readonly failOpen: boolean;
}

export const ROUTE_OPTION_NAMES = [
  'header',
  'key',
  'methods',
  'required',
  'scope',
  'fingerprint',
  'keep',
  'keepServerErrors',
  'keepHeaders',
  'waitMs',
  'leaseMs',
  'retentionMs',
  'longRunning',
  'failOpen',
] as const;

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const METHOD = /^[A-Z]+$/;

/** Checks the options of an adapter factory once; everything after this is per request and never throws here. */
export function checkOptionNames(adapter: string, options: unknown, extra: readonly string[] = []): void {
  if (options === null || typeof options !== 'object') {
    throw new InvalidOptionsError(`oncely/${adapter}: options are required ({ store })`);
  }
  knownOptions(`oncely/${adapter}`, options, [
    ...new Set([...ENGINE_OPTION_NAMES, ...ROUTE_OPTION_NAMES, 'localCache', 'logger', ...extra]),
  ]);
}

/** The engine, cache and notices every route of one factory call shares. */
export function createShared<Req>(adapter: string, options: HttpIdempotencyOptions<Req>) {
  const engineOptions: Record<string, unknown> = {};
  for (const name of ENGINE_OPTION_NAMES)
    if (options[name] !== undefined) engineOptions[name] = options[name];
  const notices = new Notices(adapter, resolveLogger(options.logger));
  // Every store failure tells the logger why (rate-limited per cause), whether or not the user hooks onEvent;
  // without a hook of theirs, the engine builds no other event for it.
  const onEvent = options.onEvent;
  optionalFunction('onEvent', onEvent);
  engineOptions.onEvent =
    onEvent === undefined
      ? storeErrorsOnly((event) => notices.storeFailed(event.error))
      : (event: OncelyEvent) => {
          if (event.type === 'storeError') notices.storeFailed(event.error);
          onEvent(event);
        };
  const engine = new Engine(engineOptions as unknown as EngineOptions);
  return {
    engine,
    notices,
    scopeNotices: scopeNotices(notices),
    cache: resolveCache(options.localCache),
    // Already validated by the engine; the status route and the cache need them to answer as a replay would.
    maxBodyBytes: options.maxBodyBytes ?? defaultEnvelopeOptions.maxBodyBytes,
    blobStore: options.blobStore,
  };
}

export type Shared = ReturnType<typeof createShared>;

function resolveCache(option: boolean | LocalCacheOptions | undefined): LocalOutcomeCache | undefined {
  if (option === undefined || option === false) return undefined;
  if (option !== true && (option === null || typeof option !== 'object')) {
    throw new InvalidOptionsError('localCache must be true, false or { maxEntries, maxBytes, ttlMs }');
  }
  const given: LocalCacheOptions = option === true ? {} : option;
  knownOptions('localCache', given, ['maxEntries', 'maxBytes', 'ttlMs']);
  return new LocalOutcomeCache({
    maxEntries: wholeNumber('localCache.maxEntries', given.maxEntries, 10_000, { min: 1 }),
    maxBytes: wholeNumber('localCache.maxBytes', given.maxBytes, 64 * 1024 * 1024, { min: 1 }),
    ttlMs: wholeNumber('localCache.ttlMs', given.ttlMs, 60_000, { min: 1 }),
  });
}

/**
 * What the default scope tells the logger, once each: a request with no identity, or only its cookies whole. Each
 * notice takes itself off once said, so the requests after it do not call in here again.
 */
function scopeNotices(notices: Notices): ScopeNotices {
  const carriers = `Authorization, API-key header (${API_KEY_HEADERS.join(', ')})`;
  const said: ScopeNotices = {
    anonymous: (route) => {
      said.anonymous = undefined;
      notices.once(
        'anonymous',
        () =>
          `a request with an Idempotency-Key to ${route} carried no ${carriers} or cookie, so its record is shared by every client that sends the same key there. If your clients are identified another way (mTLS, a header your gateway adds, an IP allowlist), pass scope: (request) => <the client's id>. Said once; see docs/http.md#scope.`,
      );
    },
    wholeCookie: (route) => {
      said.wholeCookie = undefined;
      notices.once(
        'wholeCookie',
        () =>
          `a request with an Idempotency-Key to ${route} was scoped by its whole Cookie header: it carried no ${carriers} and no cookie named like a session (sess, sid, auth, token, jwt, login). A cookie that changes between retries (a load balancer's, an analytics one) makes the retry run again. Pass scope: (request) => <the session's or user's id>. Said once; see docs/http.md#scope.`,
      );
    },
  };
  return said;
}

/**
 * Resolves route options over `base` (the factory's options, or the engine's defaults for the first call, with
 * the factory's `notices` for the default scope). Throws `InvalidOptionsError` with the option's name for
 * anything malformed.
 */
export function resolveRoute<Req>(
  adapter: string,
  options: RouteOptions<Req>,
  base: ResolvedRoute<Req> | { readonly leaseMs: number; readonly retentionMs: number },
  notices?: ScopeNotices,
): ResolvedRoute<Req> {
  const inherited = 'methods' in base ? base : undefined;
  const header = options.header ?? inherited?.header ?? 'idempotency-key';
  if (typeof header !== 'string' || !HEADER_NAME.test(header)) {
    throw new InvalidOptionsError(`header must be a header name, got ${String(header)}`);
  }
  const leaseMs = wholeNumber('leaseMs', options.leaseMs, base.leaseMs, { min: 10 });
  const retentionMs = wholeNumber('retentionMs', options.retentionMs, base.retentionMs, { min: 1 });
  // A record that expires under a running owner would let a duplicate run the effect again (the engine refuses
  // the same for its own options; a route may set either one and inherit the other).
  if (retentionMs < leaseMs)
    throw new InvalidOptionsError(`retentionMs (${retentionMs}) must be at least leaseMs (${leaseMs})`);
  return {
    header: header.toLowerCase(),
    key: resolveKeyFunction(options.key, inherited?.key),
    methods:
      options.methods === undefined
        ? (inherited?.methods ?? new Set(['POST', 'PATCH']))
        : methodSet(options.methods),
    required: flag('required', options.required, inherited?.required ?? true),
    scope: resolveScope(adapter, options.scope, inherited?.scope, notices),
    fingerprint: resolveFingerprint(options.fingerprint, inherited?.fingerprint),
    keep: resolveKeep(options, inherited?.keep),
    keepHeaders:
      options.keepHeaders === undefined
        ? (inherited?.keepHeaders ?? new Set())
        : headerSet(options.keepHeaders),
    waitMs: wholeNumber('waitMs', options.waitMs, inherited?.waitMs ?? 0),
    leaseMs,
    retentionMs,
    longRunning: resolveLongRunning(options.longRunning, inherited?.longRunning),
    failOpen: flag('failOpen', options.failOpen, inherited?.failOpen ?? false),
  };
}

function flag(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new InvalidOptionsError(`${name} must be true or false`);
  return value;
}

function methodSet(methods: unknown): ReadonlySet<string> {
  if (
    !Array.isArray(methods) ||
    methods.some((method) => typeof method !== 'string' || !METHOD.test(method))
  ) {
    throw new InvalidOptionsError(
      'methods must be an array of upper-case method names, such as ["POST", "PATCH"]',
    );
  }
  const safe = methods.filter((method) => method === 'GET' || method === 'HEAD' || method === 'OPTIONS');
  if (safe.length > 0)
    throw new InvalidOptionsError(`methods must be unsafe methods; ${safe.join(', ')} are safe`);
  return new Set(methods as string[]);
}

function headerSet(names: unknown): ReadonlySet<string> {
  if (!Array.isArray(names) || names.some((name) => typeof name !== 'string' || !HEADER_NAME.test(name))) {
    throw new InvalidOptionsError('keepHeaders must be an array of header names');
  }
  const lower = (names as string[]).map((name) => name.toLowerCase());
  const framing = lower.filter((name) => FRAMING_HEADERS.has(name));
  if (framing.length > 0)
    throw new InvalidOptionsError(`keepHeaders cannot keep framing headers (${framing.join(', ')})`);
  if (lower.includes(SET_COOKIE))
    throw new InvalidOptionsError(
      "keepHeaders cannot keep set-cookie: a replay would hand the first client's cookies (its session) to whoever " +
        'retries with the same key. Set cookies on the replay from your own code, or in middleware before the layer',
    );
  return new Set(lower);
}

function resolveScope<Req>(
  adapter: string,
  scope: RouteOptions<Req>['scope'],
  inherited: ResolvedRoute<Req>['scope'] | undefined,
  notices: ScopeNotices | undefined,
): ResolvedRoute<Req>['scope'] {
  if (scope === undefined) return inherited ?? (notices ? defaultScopeWith(notices) : defaultScope);
  if (scope === GLOBAL_SCOPE) {
    warnGlobalScope(adapter);
    return () => GLOBAL_SCOPE;
  }
  if (typeof scope !== 'function')
    throw new InvalidOptionsError("scope must be a function (request) => string or 'global'");
  return (view) => {
    const value = scope(view.request);
    // A scope that is not a string would silently merge records; fail this request loudly instead.
    if (typeof value !== 'string') throw new InvalidOptionsError('scope: the function must return a string');
    return `custom\n${value}`;
  };
}

function resolveFingerprint<Req>(
  mode: unknown,
  inherited: FingerprintMode<Req> | undefined,
): FingerprintMode<Req> {
  if (mode === undefined) return inherited ?? 'bytes';
  if (mode === 'bytes' || mode === 'canonical-json' || typeof mode === 'function')
    return mode as FingerprintMode<Req>;
  throw new InvalidOptionsError(
    "fingerprint must be 'bytes', 'canonical-json' or a function (request) => value",
  );
}

function resolveKeep<Req>(options: RouteOptions<Req>, inherited: KeepStatus | undefined): KeepStatus {
  optionalFunction('keep', options.keep);
  if (options.keep !== undefined) return options.keep;
  if (options.keepServerErrors !== undefined)
    return defaultKeepStatus(flag('keepServerErrors', options.keepServerErrors, false));
  return inherited ?? defaultKeepStatus(false);
}

function resolveLongRunning(
  option: LongRunningOptions | undefined,
  inherited: Required<LongRunningOptions> | undefined,
): Required<LongRunningOptions> | undefined {
  if (option === undefined) return inherited;
  if (option === null || typeof option !== 'object' || typeof option.location !== 'function') {
    throw new InvalidOptionsError('longRunning must be { location: (id) => string, pollAfterMs? }');
  }
  knownOptions('longRunning', option, ['location', 'pollAfterMs']);
  return {
    location: option.location,
    pollAfterMs: wholeNumber('longRunning.pollAfterMs', option.pollAfterMs, 1_000, { min: 1 }),
  };
}
