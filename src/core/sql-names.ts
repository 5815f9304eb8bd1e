/**
 * @module SQL names: how a schema or table name given in options is checked and quoted. Shared by the PostgreSQL
 * store and the tools beside it (the dashboard's event log and outbox panel, the CLI), so every one of them checks
 * and quotes a name the same way without reaching into a store's private modules.
 */
import { InvalidOptionsError } from './errors.js';

/** `"name"`, with embedded double quotes doubled: safe for any schema or table name. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A name from options, or `fallback`: PostgreSQL truncates longer names silently, which would break references to them. */
export function sqlName(what: string, value: unknown, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || value === '' || Buffer.byteLength(value) > 63 || value.includes('\0')) {
    throw new InvalidOptionsError(`${what} must be a name of 1 to 63 bytes, got ${String(value)}`);
  }
  return value;
}
