/**
 * @module The connection URLs the CLI reads (`DATABASE_URL`, `REDIS_URL`, `MYSQL_URL`): their defaults, checked before
 * anything is dialled, passwords masked in messages.
 */
import { UsageError } from './errors.js';

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
export const DEFAULT_MYSQL_URL = 'mysql://root@127.0.0.1:3306/test';

export interface ConnectionUrl {
  /** What the driver gets. */
  readonly url: string;
  /** The same with any password masked, for messages. */
  readonly shown: string;
}

/** DATABASE_URL, checked: the pg driver resolves anything else against `postgres://base`, "ENOTFOUND base". */
export function databaseUrl(): ConnectionUrl {
  return checked('DATABASE_URL', DEFAULT_DATABASE_URL, {
    'postgres:': 'postgres://',
    'postgresql:': 'postgresql://',
    'socket:': 'socket:/path/to/socket-dir?db=name',
  });
}

/** REDIS_URL, checked: ioredis would take a bare word for a host name and fail on DNS instead. */
export function redisUrl(): ConnectionUrl {
  return checked('REDIS_URL', DEFAULT_REDIS_URL, { 'redis:': 'redis://', 'rediss:': 'rediss://' });
}

/** MYSQL_URL, checked: both MySQL drivers take `mysql://user:password@host:port/database`. */
export function mysqlUrl(): ConnectionUrl {
  return checked('MYSQL_URL', DEFAULT_MYSQL_URL, { 'mysql:': 'mysql://', 'mariadb:': 'mariadb://' });
}

/** `schemes` maps each accepted URL scheme to how the message shows it. */
function checked(
  variable: string,
  fallback: string,
  schemes: Readonly<Record<string, string>>,
): ConnectionUrl {
  // Unset and empty mean the same (an empty line in an .env file): the documented localhost default.
  const url = process.env[variable] || fallback;
  const shown = redact(url);
  const expected = `a URL like ${fallback} (${Object.values(schemes).join(', ')})`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`${variable} is not a URL: "${shown}"; give ${expected}`);
  }
  if (!Object.hasOwn(schemes, parsed.protocol)) {
    throw new UsageError(`${variable} has the scheme "${parsed.protocol}" in "${shown}"; give ${expected}`);
  }
  return { url, shown };
}

/** Masks the password of `scheme://user:password@host`, parseable or not. */
export const redact = (url: string) => url.replace(/:[^:@/]*@/, ':***@');
