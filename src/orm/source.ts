/**
 * @module The PostgreSQL store's statements run through an ORM instead of a `pg` pool. The store sends every
 * statement as `query({ text, values })` (runtime.ts); this source writes the values into the text as literals,
 * sends it through the ORM's raw query, and hands back rows the store's readers understand. Failures keep the
 * SQLSTATE where the ORM wrapped it, so the store's retries and hints work as on pg.
 */
import type { Row } from '../stores/postgres/rows.js';
import { inlineParameters, type SqlValue } from '../stores/postgres/sql.js';
import type { HandleKind, RawRow } from './driver.js';
import { normalizeRow } from './rows.js';

/** An error carrying a SQLSTATE the way the store reads one from pg (`severity` and `code`). */
export class SqlStateError extends Error {
  readonly severity = 'ERROR';
  readonly code: string;
  constructor(code: string, cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'SqlStateError';
    this.code = code;
  }
}

/**
 * The SQLSTATE of an ORM's failure: the kind's own reading where it has one (an ORM that wraps errors knows where
 * the state is, and its own codes, Prisma's `P2010`, look like one), else `code` down the cause chain.
 */
export function stateOf(kind: Pick<HandleKind<unknown>, 'stateOf'>, error: unknown): string | undefined {
  if (kind.stateOf !== undefined) return kind.stateOf(error);
  for (let at: unknown = error, depth = 0; at !== null && typeof at === 'object' && depth < 5; depth++) {
    const code = (at as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
    at = (at as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Runs statements through `run`, normalizing rows and failures (a SQLSTATE, when one is found, as pg shows it). */
export async function runStatements(
  kind: Pick<HandleKind<unknown>, 'stateOf'>,
  run: (statements: readonly string[]) => Promise<RawRow[][]>,
  statements: readonly string[],
): Promise<Row[][]> {
  let results: RawRow[][];
  try {
    results = await run(statements);
  } catch (error) {
    const state = stateOf(kind, error);
    throw state === undefined ? error : new SqlStateError(state, error);
  }
  return results.map((rows) => rows.map(normalizeRow));
}

/**
 * A `pg`-shaped source over an ORM's autocommit queries, for the store's plain statements (get, complete, release,
 * stats, the inspector). It poses as a pool (`totalCount`) because each statement is a transaction of its own, so
 * the store may run one again after a serialization failure.
 */
export function ormSource(
  kind: Pick<HandleKind<unknown>, 'stateOf'>,
  run: (statements: readonly string[]) => Promise<RawRow[][]>,
) {
  return {
    totalCount: 0,
    async query(config: { text: string; values?: readonly SqlValue[] }): Promise<{ rows: Row[] }> {
      const text = inlineParameters(config.text, config.values ?? []);
      const [rows = []] = await runStatements(kind, run, [text]);
      return { rows };
    },
  };
}
