/**
 * @module The PostgreSQL store's statements for one table: the embedded `sql/*.sql` files rendered with the quoted
 * schema and table, comments stripped, and the quoting and inlining used where statements travel without parameters.
 */
import { createHash } from 'node:crypto';
import { quoteIdentifier } from '../../core/sql-names.js';
import beginSql from './sql/begin.sql.generated.js';
import completeSql from './sql/complete.sql.generated.js';
import completeInTransactionSql from './sql/complete-in-transaction.sql.generated.js';
import deleteSql from './sql/delete.sql.generated.js';
import getSql from './sql/get.sql.generated.js';
import inspectRecordSql from './sql/inspect-record.sql.generated.js';
import purgeSql from './sql/purge.sql.generated.js';
import releaseSql from './sql/release.sql.generated.js';
import renewSql from './sql/renew.sql.generated.js';
import statsSql from './sql/stats.sql.generated.js';
import surveyCountsSql from './sql/survey-counts.sql.generated.js';
import surveyListsSql from './sql/survey-lists.sql.generated.js';

/** A statement parameter: the store only ever sends these. */
export type SqlValue = string | number | boolean | Uint8Array | null;

/** Where a store's records live, as SQL fragments ready to splice into statements. */
export interface TableTarget {
  /** `"schema"."table"`. */
  readonly qualified: string;
  /** The same name as a string literal, for `::regclass`. */
  readonly literal: string;
  /** The NOTIFY/LISTEN channel of this table (an identifier of at most 63 bytes). */
  readonly channel: string;
}

export interface Statements {
  readonly begin: string;
  readonly complete: string;
  /** `complete` inside a transactional claim's transaction, refused unless it is still the claim's. */
  readonly completeInTransaction: string;
  readonly release: string;
  readonly renew: string;
  readonly get: string;
  readonly delete: string;
  readonly purge: string;
  readonly stats: string;
  /** The inspector's (inspect.ts): a survey's counts and lists, one record's view. */
  readonly surveyCounts: string;
  readonly surveyLists: string;
  readonly inspectRecord: string;
}

export { quoteIdentifier };

/** A string literal, safe whatever `standard_conforming_strings` says (the same rules as `pg.escapeLiteral`). */
export function quoteLiteral(value: string): string {
  const quoted = `'${value.replaceAll("'", "''")}'`;
  return value.includes('\\') ? ` E${quoted.replaceAll('\\', '\\\\')}` : quoted;
}

export function tableTarget(schema: string, table: string): TableTarget {
  const qualified = `${quoteIdentifier(schema)}.${quoteIdentifier(table)}`;
  // A hash keeps the channel within PostgreSQL's 63-byte identifier limit whatever the names' lengths.
  const channel = `oncely_${createHash('sha256').update(`${schema}\0${table}`).digest('hex').slice(0, 24)}`;
  return { qualified, literal: quoteLiteral(qualified), channel };
}

/** The statements of one table, comments stripped (they cost bytes on every call and never reach the planner). */
export function statementsFor(target: TableTarget, { notify }: { notify: boolean }): Statements {
  const notifying = notify ? `d.key, pg_notify(${quoteLiteral(target.channel)}, d.key)` : 'd.key';
  const render = (template: string) =>
    template
      .split('\n')
      .filter((line) => !line.trimStart().startsWith('--'))
      .join('\n')
      .replaceAll('{{table}}', target.qualified)
      .replaceAll('{{table_literal}}', target.literal)
      .replaceAll('{{notify}}', notifying)
      .trim();
  return {
    begin: render(beginSql),
    complete: render(completeSql),
    completeInTransaction: render(completeInTransactionSql),
    release: render(releaseSql),
    renew: render(renewSql),
    get: render(getSql),
    delete: render(deleteSql),
    purge: render(purgeSql),
    stats: render(statsSql),
    surveyCounts: render(surveyCountsSql),
    surveyLists: render(surveyListsSql),
    inspectRecord: render(inspectRecordSql),
  };
}

/**
 * Writes the parameters into the statement as literals, where several statements go in one message (the simple
 * query protocol takes no parameters: `BEGIN; …; begin` in transactional mode) and where statements go through an
 * ORM's raw query. Arrays become `ARRAY[…]`; the statement's own cast (`$1::text[]`) types them.
 */
export function inlineParameters(text: string, values: readonly (SqlValue | readonly SqlValue[])[]): string {
  return text.replace(/\$(\d+)/g, (_, position: string) => {
    const value = values[Number(position) - 1];
    if (value === undefined) throw new RangeError(`no value for $${position}`);
    if (Array.isArray(value)) return `ARRAY[${value.map((each) => literalOf(each, position)).join(', ')}]`;
    return literalOf(value as SqlValue, position);
  });
}

function literalOf(value: SqlValue, position: string): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new RangeError(`$${position} must be a whole number`);
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'string') return quoteLiteral(value);
  return `decode('${Buffer.from(value).toString('hex')}', 'hex')`;
}
