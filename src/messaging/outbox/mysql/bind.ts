/**
 * @module How the MySQL outbox's statements take their values: `:name` placeholders become the drivers' positional
 * `?` (a name may appear several times), a list becomes `?, ?, …`, and outbox ids are written in as digits.
 */
import { InvalidOptionsError } from '../../../core/errors.js';
import type { SqlValue } from '../../../stores/mysql/driver.js';

/** Outbox ids, written into the text as digits: exact for BIGINT UNSIGNED, and `id IN (…)` is a primary-key lookup. */
export interface Digits {
  readonly digits: readonly string[];
}

/** A value (one `?`), a list of values (`?, ?, …`), or ids (digits). An empty list is `NULL`: `IN (NULL)` is false. */
export type Param = SqlValue | readonly SqlValue[] | Digits;

export interface Bound {
  readonly sql: string;
  readonly values: SqlValue[];
}

const DIGITS = /^\d{1,20}$/;

/** Outbox ids as `Digits`, each checked: they come from rows or from callers (dead-letter selections). */
export function digits(ids: readonly string[]): Digits {
  for (const id of ids) {
    if (typeof id !== 'string' || !DIGITS.test(id))
      throw new InvalidOptionsError('outbox ids are digit strings');
  }
  return { digits: ids };
}

const isDigits = (value: Param): value is Digits =>
  value !== null && typeof value === 'object' && 'digits' in value;

/**
 * The statement with its placeholders filled for the drivers' `query` (text protocol; each driver escapes the
 * values). A placeholder without a value is a bug, never sent as NULL.
 */
export function bind(sql: string, params: Readonly<Record<string, Param>>): Bound {
  const values: SqlValue[] = [];
  const text = sql.replace(/:([a-z][a-z_]*)/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new RangeError(`no value for :${name}`);
    if (isDigits(value)) return value.digits.length === 0 ? 'NULL' : value.digits.join(', ');
    if (Array.isArray(value)) {
      if (value.length === 0) return 'NULL';
      values.push(...(value as readonly SqlValue[]));
      return value.map(() => '?').join(', ');
    }
    values.push(value as SqlValue);
    return '?';
  });
  return { sql: text, values };
}
