/**
 * @module Prisma's transaction objects as oncely sees them: the interactive transaction client that
 * `prisma.$transaction(async (tx) => …)` hands its callback, recognized by shape (nothing of Prisma is imported at
 * run time), and oncely's statements sent through its `$queryRawUnsafe` / `$executeRawUnsafe`.
 */
import type { HandleKind, RawRow } from '../driver.js';

/** The raw-query methods oncely calls, which a PrismaClient and its interactive transaction client both have. */
export interface PrismaRawQueries {
  $queryRawUnsafe<Row = unknown>(query: string): PromiseLike<Row>;
  $executeRawUnsafe(query: string): PromiseLike<number>;
}

/** Prisma's isolation level names, as `$transaction`'s `isolationLevel` option takes them. */
export type PrismaIsolationLevel = 'ReadCommitted' | 'RepeatableRead' | 'Serializable';

/**
 * What oncely needs of a PrismaClient (the generated one, or one made with `$extends`): the raw queries and the
 * interactive `$transaction` (its callback form). Written as methods, as Prisma declares them, so the generated
 * client's overloads and its own option types fit.
 */
export interface PrismaClientLike extends PrismaRawQueries {
  $transaction<R>(
    // `unknown`: Prisma's callback takes the client's own transaction type, which any value type accepts here.
    work: (transaction: unknown) => Promise<R>,
    options?: { maxWait?: number; timeout?: number; isolationLevel?: PrismaIsolationLevel },
  ): PromiseLike<R>;
}

/**
 * The interactive transaction client of `Client`, the type its `$transaction(async (tx) => …)` gives `tx`: for a
 * generated client that is `Prisma.TransactionClient` (the models, the raw queries, no `$connect`/`$disconnect`).
 * Taken from `Client`'s own `$transaction` (its last overload, the callback one), so a client made with `$extends`
 * gets its extended transaction client.
 */
export type PrismaTransaction<Client extends PrismaClientLike> = TransactionOfCallback<
  CallbackOf<Client['$transaction']>
>;

type CallbackOf<Method> = Method extends (work: infer Work, ...rest: never[]) => unknown ? Work : never;
type TransactionOfCallback<Work> = Work extends (transaction: infer Transaction) => unknown
  ? Transaction
  : never;

// Statements that never return rows, by their first word: in a transaction, a run of them goes to the server as
// one simple-query message through `$executeRawUnsafe` (one round trip). `$queryRawUnsafe` cannot take several
// statements: the adapter reads one result's columns and fails on pg's array of results.
const ROWLESS = new Set([
  'abort',
  'alter',
  'begin',
  'comment',
  'commit',
  'create',
  'discard',
  'do',
  'drop',
  'end',
  'grant',
  'lock',
  'release',
  'reset',
  'revoke',
  'rollback',
  'savepoint',
  'set',
  'start',
  'truncate',
]);

/** The statement's first keyword, past blanks and comments, in lower case. */
function firstWord(statement: string): string {
  const text = statement.replace(/^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/, '');
  return /^[A-Za-z]+/.exec(text)?.[0]?.toLowerCase() ?? '';
}

/** True for a statement that cannot return rows (DDL, transaction control, SET …). */
export function returnsNoRows(statement: string): boolean {
  return ROWLESS.has(firstWord(statement));
}

const isFunction = (value: unknown): boolean => typeof value === 'function';

// Prisma 7 marks each interactive transaction client with its scope, under a registered symbol: the client's
// transaction id and the stack of its open (nested) transactions, from which a scope is taken off when its
// callback ends. The stack is what tells an open transaction client from one whose callback returned, which
// `$disconnect`'s absence cannot (every transaction client lacks it, open or not).
const TRANSACTION_SCOPE = Symbol.for('prisma.client.transaction.scope_context');

interface TransactionScope {
  readonly kind: 'nested';
  readonly scopeId: string;
  readonly scopeState: { readonly stack: readonly string[] };
}

function scopeOf(handle: object): TransactionScope | undefined {
  const scope = (handle as { [TRANSACTION_SCOPE]?: unknown })[TRANSACTION_SCOPE];
  if (scope === null || typeof scope !== 'object') return undefined;
  const { kind, scopeId, scopeState } = scope as Partial<TransactionScope>;
  const stack = scopeState?.stack;
  return kind === 'nested' && typeof scopeId === 'string' && Array.isArray(stack)
    ? (scope as TransactionScope)
    : undefined;
}

/**
 * Prisma's objects for oncely's ORM mode: a PrismaClient or an interactive transaction client of one (Prisma makes
 * those without `$connect`/`$disconnect`: its `ITXClientDenyList`).
 */
export const prismaTransactions: HandleKind<PrismaRawQueries> = {
  name: 'prisma',
  is(value: unknown): value is PrismaRawQueries {
    if (value === null || typeof value !== 'object') return false;
    const candidate = value as Partial<Record<'$queryRawUnsafe' | '$executeRawUnsafe', unknown>>;
    return isFunction(candidate.$queryRawUnsafe) && isFunction(candidate.$executeRawUnsafe);
  },
  inTransaction(handle: PrismaRawQueries): boolean {
    const scope = scopeOf(handle);
    if (scope !== undefined) return scope.scopeState.stack.includes(scope.scopeId);
    // A Prisma without the scope mark: a transaction client, open or not, is all its shape tells.
    return !isFunction((handle as { $disconnect?: unknown }).$disconnect);
  },
  async run(handle: PrismaRawQueries, statements: readonly string[]): Promise<RawRow[][]> {
    // Several statements in one message run as one implicit transaction, so outside a transaction (each statement
    // commits on its own) they go one by one.
    const batched = prismaTransactions.inTransaction(handle);
    const results: RawRow[][] = [];
    let rowless: string[] = [];
    const sendRowless = async () => {
      if (rowless.length === 0) return;
      // A newline before each `;`: a statement ending in a `--` comment would otherwise comment the `;` out.
      await handle.$executeRawUnsafe(rowless.join('\n;\n'));
      for (const _ of rowless) results.push([]);
      rowless = [];
    };
    for (const statement of statements) {
      if (returnsNoRows(statement)) {
        rowless.push(statement);
        if (!batched) await sendRowless();
        continue;
      }
      await sendRowless();
      // An array of plain objects by column name: Prisma's answer to a raw query.
      results.push(await handle.$queryRawUnsafe<RawRow[]>(statement));
    }
    await sendRowless();
    return results;
  },
  stateOf(error: unknown): string | undefined {
    return sqlStateOf(error);
  },
};

const SQLSTATE = /^[0-9A-Z]{5}$/;

/**
 * The SQLSTATE of a failure of Prisma with `@prisma/adapter-pg`. Prisma wraps the driver's error: a raw query's
 * failure is a `PrismaClientKnownRequestError` with Prisma's own `code` (`P2010`, never a SQLSTATE, though it looks
 * like one) and the adapter's error in `meta.driverAdapterError`, whose `cause.originalCode` is pg's SQLSTATE.
 * The adapter's error may also come on its own (`name` `DriverAdapterError`).
 */
export function sqlStateOf(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const meta = (error as { meta?: { driverAdapterError?: unknown } }).meta;
  const adapterError =
    meta?.driverAdapterError ??
    ((error as { name?: unknown }).name === 'DriverAdapterError' ? error : undefined);
  const code = (adapterError as { cause?: { originalCode?: unknown } } | undefined)?.cause?.originalCode;
  return typeof code === 'string' && SQLSTATE.test(code) ? code : undefined;
}
