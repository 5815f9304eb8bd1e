/**
 * @module Where a command's PostgreSQL records are (`--schema`, `--table`), validated as the store validates them,
 * and a missing table reported with the migrate command to run.
 */
import type { Pool } from 'pg';
import { isInvalidOptionsError } from '../core/errors.js';
import { sqlName as identifier, quoteIdentifier } from '../core/sql-names.js';
import { outboxTable } from '../messaging/outbox/table.js';
import { CommandFailed, UsageError } from './errors.js';

/** Where the PostgreSQL store's keys live, from `--schema` and `--table`, validated as the store validates them. */
export interface KeysTable {
  readonly schema: string;
  readonly table: string;
  /** `"schema"."table"`. */
  readonly qualified: string;
  /** The flags as given, for the `oncely migrate …` hint. */
  readonly flags: readonly string[];
}

export function keysTable(values: { schema?: string | undefined; table?: string | undefined }): KeysTable {
  const schema = checkName('schema', values.schema, 'public', (v) => identifier('schema', v, 'public'));
  const table = checkName('table', values.table, 'oncely_keys', (v) => identifier('table', v, 'oncely_keys'));
  return {
    schema,
    table,
    qualified: `${quoteIdentifier(schema)}.${quoteIdentifier(table)}`,
    flags: [...flag('schema', values.schema), ...flag('table', values.table)],
  };
}

/** The outbox's schema from `--schema`. Its table is always `oncely_outbox` (the outbox has no table option). */
export function outboxSchema(value: string | undefined): { schema: string; qualified: string } {
  const schema = checkName('schema', value, 'public', (v) => outboxTable(v).schema);
  return { schema, qualified: outboxTable(schema).name };
}

/**
 * Fails with the migrate hint when the table is missing. Commands that read or maintain records never create
 * anything: a typo in --schema must not leave an empty schema behind, and DDL belongs to `oncely migrate`.
 */
export async function requireTable(
  pool: Pool,
  qualified: string,
  where: string,
  migrateFlags: readonly string[],
): Promise<void> {
  // to_regclass answers NULL for a missing schema as well as a missing table, and needs no privileges on either.
  const { rows } = await pool.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [
    qualified,
  ]);
  if (rows[0]?.present) return;
  throw new CommandFailed(
    `there is no table ${qualified} in ${where}; run: ${['oncely migrate', ...migrateFlags].join(' ')}`,
  );
}

function checkName(
  name: 'schema' | 'table',
  value: string | undefined,
  fallback: string,
  validate: (value: string) => string,
): string {
  if (value === undefined) return fallback;
  try {
    return validate(value);
  } catch (error) {
    if (!isInvalidOptionsError(error)) throw error;
    throw new UsageError(`--${name} "${value}" is not valid: ${error.message}`);
  }
}

function flag(name: string, value: string | undefined): string[] {
  return value === undefined ? [] : [`--${name}`, shellWord(value)];
}

/** Quotes a value for a shell when it needs it, so the printed hint can be pasted as is. */
export function shellWord(value: string): string {
  return /^[\w.,:@%+=/-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}
