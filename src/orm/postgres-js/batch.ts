/**
 * @module Several of oncely's statements in one simple-query message, and each statement's rows picked out of what
 * the driver hands back. Shared by the postgres.js driver and the Drizzle driver (whose `execute` reaches pg or
 * postgres.js underneath).
 *
 * Why a boundary statement between them: the drivers do not give back one result per statement. pg gives one per
 * statement the server ran, so a statement text that is itself several statements (`ROLLBACK TO SAVEPOINT …;
 * RELEASE SAVEPOINT …`) shifts every later one; postgres.js starts a new result only when a statement returns rows,
 * so a `SAVEPOINT` or `SET` leaves no result of its own and merges into the one before. A one-column `SELECT` with a
 * name of oncely's between two statements always starts a result of its own in both, so the results between two
 * boundaries are one statement's, whatever each driver does with statements that return no rows.
 */
import type { RawRow } from '../driver.js';

/** The column of the boundary statement; no statement of the store's selects it. */
export const BOUNDARY_COLUMN = 'oncely.statement_boundary';

/**
 * The statements as one message, a boundary between each two. Each boundary starts on a new line, so a statement
 * ending in a `--` comment cannot swallow it; an empty statement (`;;`) where a statement already ends in `;` is
 * harmless.
 */
export function batchText(statements: readonly string[]): string {
  return statements.join(`\n;SELECT 1 AS "${BOUNDARY_COLUMN}";\n`);
}

/** One result as the driver gave it: its rows, whether it describes rows at all, and whether it is a boundary's. */
interface ResultSet {
  readonly rows: readonly RawRow[];
  /** False for a command that returns no rows (`SAVEPOINT`, `SET`, an INSERT without RETURNING): no columns. */
  readonly described: boolean;
  readonly boundary: boolean;
}

interface Column {
  readonly name: string;
}

const isBoundary = (columns: readonly Column[] | null | undefined): boolean =>
  columns?.length === 1 && columns[0]?.name === BOUNDARY_COLUMN;

/** A postgres.js `Result`: an array of rows with its own `count` (a plain array of results has none). */
const isPostgresJsResult = (value: unknown): value is RawRow[] & { readonly columns: Column[] | null } =>
  Array.isArray(value) && Object.hasOwn(value, 'count');

/** A pg `QueryResult` (or a result shaped like it): `rows` and the `fields` that describe them. */
const isPgResult = (value: unknown): value is { readonly rows: RawRow[]; readonly fields: Column[] } =>
  typeof value === 'object' && value !== null && Array.isArray((value as { rows?: unknown }).rows);

const setOf = (rows: readonly RawRow[], columns: readonly Column[] | null | undefined): ResultSet => ({
  rows,
  described: (columns?.length ?? 0) > 0,
  boundary: isBoundary(columns),
});

function resultSetOf(value: unknown): ResultSet {
  if (isPostgresJsResult(value)) return setOf(value, value.columns);
  if (isPgResult(value)) return setOf(value.rows, value.fields);
  throw new TypeError('oncely: the driver answered a statement with neither pg nor postgres.js result');
}

/**
 * What the driver resolved with for one message (one result, or an array of them when there were several), as one
 * list of results, in the shapes of pg (`QueryResult`) and postgres.js (`Result`).
 */
function resultSetsOf(value: unknown): ResultSet[] {
  if (isPostgresJsResult(value) || !Array.isArray(value)) return [resultSetOf(value)];
  return value.map(resultSetOf);
}

/**
 * Each statement's rows out of the driver's answer to `batchText(statements)`: the rows of the last result between
 * two boundaries that describes rows (so a statement text of several statements, `SAVEPOINT t; SELECT …; RELEASE
 * SAVEPOINT t`, answers with its last query's rows on both drivers), or none when no statement in it returns rows.
 */
export function rowsPerStatement(answer: unknown, count: number): RawRow[][] {
  const groups: RawRow[][] = [[]];
  for (const set of resultSetsOf(answer)) {
    if (set.boundary) groups.push([]);
    else if (set.described) groups[groups.length - 1] = [...set.rows];
  }
  // A mismatch means the answer was not split as above (a driver transforming column names, …): fail loudly rather
  // than hand one statement's rows to another.
  if (groups.length !== count) {
    throw new Error(`oncely: ${count} statements sent in one message, ${groups.length} answered`);
  }
  return groups;
}
