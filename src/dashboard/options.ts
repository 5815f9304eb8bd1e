/**
 * @module The dashboard's options, their defaults, and their checks: validated once, when the dashboard is made, so
 * one that would run unguarded or misrouted throws then rather than serve a request.
 */
import type { Pool } from 'pg';
import { InvalidOptionsError } from '../core/errors.js';
import { knownOptions, wholeNumber } from '../core/validate.js';
import { type BoardSource, type DashboardStoreSource, resolveBoardSource } from './board-source.js';
import { type OutboxTarget, outboxTarget } from './outbox-panel.js';
import type { DashboardSource } from './source.js';

export interface DashboardOptions {
  /**
   * Where the idempotency records (and the event log) are: `{ redis: client, prefix? }`, `{ postgres: pool,
   * schema?, table? }`, or `{ store }` for any store with an inspector (no event log then).
   */
  readonly source: DashboardSource | DashboardStoreSource;
  /**
   * The transactional outbox to show (backlog, lag, dead letters). Default: the PostgreSQL source's pool and
   * schema; none for a Redis source. `false` hides it.
   */
  readonly outbox?: { readonly pool: Pool; readonly schema?: string } | false;
  /**
   * A secret of at least 16 characters that API calls send in the `X-Oncely-Token` header (never a cookie, so a
   * browser cannot attach it to a forged request). Required by `actions` and `readsNeedToken`.
   */
  readonly token?: string;
  /** Enables the operator actions (replay or discard a dead letter, release or delete a key). Default false. */
  readonly actions?: boolean;
  /** Every API call, reads included, needs the token (the CLI sets it when it listens beyond loopback). Default false. */
  readonly readsNeedToken?: boolean;
  /** The path the application mounts the dashboard under, e.g. `/ops/oncely`. Default `''` (the root). */
  readonly basePath?: string;
  /**
   * Origins (`https://ops.example.com`) allowed to POST actions besides the request's own (its `Host`): for a
   * proxy that rewrites `Host`. Default none.
   */
  readonly allowedOrigins?: readonly string[];
  /**
   * `Host` header values the dashboard answers (`127.0.0.1:8080`); any other is refused, which stops DNS
   * rebinding against a dashboard on loopback. Default: any (an application's own routing decides).
   */
  readonly allowedHosts?: readonly string[];
  /** How often the page refreshes, ms; the server computes one snapshot per interval for all viewers. Default 2,000. */
  readonly refreshMs?: number;
  /** Rows per list (keys, dead letters, topics, parked, events). Default 10. */
  readonly listLimit?: number;
  /**
   * The work the store's walk may do per refresh: keys a Redis SCAN walks (oncely's records or any other key of
   * the database), rows PostgreSQL reads. A store larger than this is `truncated`: the counts are then a lower
   * bound. Default 10,000.
   */
  readonly scanLimit?: number;
  /** Time covered by the rate charts, ms. Default 900,000 (15 minutes). */
  readonly rateWindowMs?: number;
}

export interface ResolvedDashboard {
  readonly source: BoardSource;
  readonly outbox: OutboxTarget | undefined;
  readonly token: string | undefined;
  readonly actions: boolean;
  readonly readsNeedToken: boolean;
  readonly basePath: string;
  readonly allowedOrigins: readonly string[];
  readonly allowedHosts: readonly string[] | undefined;
  readonly refreshMs: number;
  readonly listLimit: number;
  readonly scanLimit: number;
  readonly rateWindowMs: number;
}

const KNOWN = [
  'source',
  'outbox',
  'token',
  'actions',
  'readsNeedToken',
  'basePath',
  'allowedOrigins',
  'allowedHosts',
  'refreshMs',
  'listLimit',
  'scanLimit',
  'rateWindowMs',
];

export const MIN_TOKEN_LENGTH = 16;

/** Validates once, at construction: a dashboard that would run unguarded or misrouted throws here. */
export function resolveDashboardOptions(options: DashboardOptions): ResolvedDashboard {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionsError('dashboard needs options: dashboard({ source })');
  knownOptions('dashboard', options, KNOWN);
  const source = resolveBoardSource('dashboard', options.source);
  const token = options.token;
  if (token !== undefined && (typeof token !== 'string' || token.length < MIN_TOKEN_LENGTH)) {
    throw new InvalidOptionsError(
      `dashboard: token must be a string of at least ${MIN_TOKEN_LENGTH} characters`,
    );
  }
  const actions = flag('actions', options.actions);
  const readsNeedToken = flag('readsNeedToken', options.readsNeedToken);
  if ((actions || readsNeedToken) && token === undefined) {
    throw new InvalidOptionsError(
      `dashboard: ${actions ? 'actions' : 'readsNeedToken'} needs a token (the actions are off without one)`,
    );
  }
  return {
    source,
    outbox: outboxOf(options.outbox, source),
    token,
    actions,
    readsNeedToken,
    basePath: basePathOf(options.basePath),
    allowedOrigins: stringList('allowedOrigins', options.allowedOrigins) ?? [],
    allowedHosts: stringList('allowedHosts', options.allowedHosts)?.map((host) => host.toLowerCase()),
    refreshMs: wholeNumber('refreshMs', options.refreshMs, 2_000, { min: 250, max: 600_000 }),
    listLimit: wholeNumber('listLimit', options.listLimit, 10, { min: 1, max: 1_000 }),
    scanLimit: wholeNumber('scanLimit', options.scanLimit, 10_000, { min: 1 }),
    rateWindowMs: wholeNumber('rateWindowMs', options.rateWindowMs, 900_000, {
      min: 60_000,
      max: 86_400_000,
    }),
  };
}

function flag(name: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new InvalidOptionsError(`dashboard: ${name} must be true or false`);
  return value;
}

function outboxOf(value: DashboardOptions['outbox'], source: BoardSource): OutboxTarget | undefined {
  if (value === false) return undefined;
  const { events } = source;
  if (value === undefined)
    return events?.kind === 'postgres' ? outboxTarget(events.pool, events.schema) : undefined;
  if (value === null || typeof value !== 'object' || value.pool === undefined)
    throw new InvalidOptionsError('dashboard: outbox must be { pool, schema? } or false');
  knownOptions('dashboard outbox', value, ['pool', 'schema']);
  return outboxTarget(value.pool, value.schema);
}

/** '' or '/a/b': the page builds its URLs from it, so it is kept to characters that need no escaping. */
function basePathOf(value: unknown): string {
  if (value === undefined || value === '' || value === '/') return '';
  if (typeof value !== 'string' || !/^(\/[A-Za-z0-9._~-]+)+\/?$/.test(value))
    throw new InvalidOptionsError(`dashboard: basePath must look like /ops/oncely, got ${String(value)}`);
  return value.replace(/\/$/, '');
}

function stringList(name: string, value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string' && item !== ''))
    throw new InvalidOptionsError(`dashboard: ${name} must be an array of non-empty strings`);
  return [...value];
}
