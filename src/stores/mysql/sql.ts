/**
 * @module The MySQL store's statements, made from the `.sql` files beside it (embedded at build time) for one
 * table: names quoted, the clock spliced in, comments stripped, and `:name` parameters turned into the drivers'
 * positional `?` with the order of their values.
 */
import { createHash } from 'node:crypto';
import type { SqlValue } from './driver.js';
import beginSql from './sql/begin.sql.generated.js';
import claimSql from './sql/claim.sql.generated.js';
import completeSql from './sql/complete.sql.generated.js';
import deleteSql from './sql/delete.sql.generated.js';
import getSql from './sql/get.sql.generated.js';
import inspectRecordSql from './sql/inspect-record.sql.generated.js';
import purgeSql from './sql/purge.sql.generated.js';
import releaseSql from './sql/release.sql.generated.js';
import renewSql from './sql/renew.sql.generated.js';
import schemaSql from './sql/schema.sql.generated.js';
import statsSql from './sql/stats.sql.generated.js';
import surveySql from './sql/survey.sql.generated.js';

/** The server's time in milliseconds since the epoch, from UTC: no time zone or DST step can move it. */
const SERVER_CLOCK =
  "CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000 AS SIGNED)";

/** Procedures are versioned by name: a new version is created beside the old one, never replaced under traffic. */
const ROUTINE_VERSION = 'v1';

/** A statement with `?` placeholders and the parameter name each one takes. */
export interface Statement {
  readonly sql: string;
  readonly names: readonly string[];
}

export interface Statements {
  readonly complete: Statement;
  readonly release: Statement;
  readonly renew: Statement;
  readonly get: Statement;
  readonly purge: Statement;
  readonly stats: Statement;
  readonly survey: Statement;
  readonly inspectRecord: Statement;
  /** `CALL begin(key, fingerprint, lease ms, retention ms, now ms, label, keep open, lock wait s)`. */
  readonly begin: string;
  /** `CALL claim(key, fingerprint, lease ms, retention ms, now ms, label, lock wait s)`: inside an open transaction. */
  readonly claim: string;
  /** `CALL delete(key, now ms)`. */
  readonly delete: string;
}

/** The table and its procedures, by name. */
export interface Routines {
  readonly table: string;
  readonly begin: string;
  readonly claim: string;
  readonly delete: string;
}

// The columns of each procedure's one answer row, in order (begin.sql, claim.sql, delete.sql end with that SELECT):
// the claim inside an open transaction answers as begin does, and the connection a lease end must KILL.
const BEGIN_ANSWER = [
  'outcome',
  'token',
  'attempt',
  'retry_after_ms',
  'completed_at_ms',
  'status',
  'headers',
  'body',
  'encoding',
  'storage',
] as const;
const CALL_ANSWERS: Readonly<Record<'begin' | 'claim' | 'delete', readonly string[]>> = {
  begin: BEGIN_ANSWER,
  claim: [...BEGIN_ANSWER, 'connection_id'],
  delete: ['existed'],
};

/**
 * The answer columns of one of the store's CALL statements, told from the procedure's name (`…_claim_v1`), for a
 * driver that hands a CALL's row back as bare values (Prisma's mariadb adapter). Undefined for any other text.
 */
export function callAnswerColumns(sql: string): readonly string[] | undefined {
  const verb = /^CALL `(?:[^`]|``)*_(begin|claim|delete)_v\d+`\(/.exec(sql)?.[1];
  return verb === undefined ? undefined : CALL_ANSWERS[verb as keyof typeof CALL_ANSWERS];
}

/** `` `name` ``, with embedded backticks doubled: safe for any table or routine name. */
export function quoteName(name: string): string {
  return `\`${name.replaceAll('`', '``')}\``;
}

/**
 * The names of a table's procedures: `<table>_begin_v1` where that fits MySQL's 64-character limit, otherwise a
 * hash of the table's name, so two tables never share one.
 */
export function routinesOf(table: string): Routines {
  const name = (verb: string) => {
    const plain = `${table}_${verb}_${ROUTINE_VERSION}`;
    if (plain.length <= 64) return plain;
    const hash = createHash('sha256').update(table).digest('hex').slice(0, 16);
    return `oncely_${hash}_${verb}_${ROUTINE_VERSION}`;
  };
  return { table, begin: name('begin'), claim: name('claim'), delete: name('delete') };
}

function strip(text: string): string {
  return text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n')
    .trim();
}

function render(template: string, routines: Routines, clock: string): string {
  return strip(template)
    .replaceAll('{{table}}', quoteName(routines.table))
    .replaceAll('{{begin}}', quoteName(routines.begin))
    .replaceAll('{{claim}}', quoteName(routines.claim))
    .replaceAll('{{delete}}', quoteName(routines.delete))
    .replaceAll('{{expires_index}}', quoteName('expires_at_idx'))
    .replaceAll('{{clock}}', clock);
}

/** `:name` parameters to `?`, remembering their order (a name may appear several times). */
function statement(template: string, routines: Routines): Statement {
  const names: string[] = [];
  const sql = render(template, routines, `COALESCE(:now, ${SERVER_CLOCK})`).replace(
    /:([a-z]+)/g,
    (_, name: string) => {
      names.push(name);
      return '?';
    },
  );
  return { sql, names };
}

/** The values of a statement's placeholders, in order; a missing one is a bug, never sent as NULL. */
export function valuesOf(statement: Statement, values: Readonly<Record<string, SqlValue>>): SqlValue[] {
  return statement.names.map((name) => {
    const value = values[name];
    if (value === undefined) throw new RangeError(`no value for :${name}`);
    return value;
  });
}

/**
 * A statement with its `?` placeholders replaced by its values as literals, for ORMs whose raw query is a text of
 * its own: bytes and text as hex literals (`X'…'`, text with a `_utf8mb4` introducer), which read the same under
 * every `sql_mode` (`NO_BACKSLASH_ESCAPES`, `ANSI_QUOTES`) and leave no `?` or quote in the text for an ORM's own
 * placeholder handling to trip on. Only for oncely's statements: a `?` inside a quoted string or name is skipped.
 */
export function inlineValues(sql: string, values: readonly SqlValue[]): string {
  let next = 0;
  const text = sql.replace(/'(?:[^'\\]|\\.|'')*'|`(?:[^`]|``)*`|\?/g, (match) => {
    if (match !== '?') return match;
    if (next >= values.length) throw new RangeError(`no value for placeholder ${next + 1}`);
    return literalOf(values[next++] as SqlValue);
  });
  if (next !== values.length) throw new RangeError(`${values.length} values for ${next} placeholders`);
  return text;
}

function literalOf(value: SqlValue): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`);
    return String(value);
  }
  if (typeof value === 'string') return `_utf8mb4 X'${Buffer.from(value, 'utf8').toString('hex')}'`;
  return `X'${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}'`;
}

export function statementsFor(table: string): Statements {
  const routines = routinesOf(table);
  return {
    complete: statement(completeSql, routines),
    release: statement(releaseSql, routines),
    renew: statement(renewSql, routines),
    get: statement(getSql, routines),
    purge: statement(purgeSql, routines),
    stats: statement(statsSql, routines),
    survey: statement(surveySql, routines),
    inspectRecord: statement(inspectRecordSql, routines),
    begin: `CALL ${quoteName(routines.begin)}(?, ?, ?, ?, ?, ?, ?, ?)`,
    claim: `CALL ${quoteName(routines.claim)}(?, ?, ?, ?, ?, ?, ?)`,
    delete: `CALL ${quoteName(routines.delete)}(?, ?)`,
  };
}

/** The DDL of one table: the table, then its procedures, each a statement of its own (no DELIMITER needed). */
export function ddlFor(table: string): readonly string[] {
  const routines = routinesOf(table);
  const clock = `COALESCE(p_now_ms, ${SERVER_CLOCK})`;
  return [
    render(schemaSql, routines, clock),
    render(beginSql, routines, clock),
    render(claimSql, routines, clock),
    render(deleteSql, routines, clock),
  ];
}
