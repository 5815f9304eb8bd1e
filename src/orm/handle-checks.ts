/**
 * @module The two refusals every ORM store makes of what it is handed, on either database: `transactionOf(context)`
 * finds the ORM's transaction in a claim's context or says it is not there, and `join(handle)` takes only an ORM
 * transaction that is still open.
 */
import { InvalidOptionsError } from '../core/errors.js';

/** What the checks need of an ORM's handle kind (PostgreSQL's `HandleKind` and MySQL's both have it). */
export interface RecognisedHandles<Handle> {
  readonly name: string;
  is(value: unknown): value is Handle;
  inTransaction(handle: Handle): boolean;
}

/** The ORM's transaction object in a claim's context, or an `InvalidOptionsError`. */
export function transactionIn<Handle>(
  kind: RecognisedHandles<Handle>,
  context: { readonly transaction?: unknown } | null | undefined,
): Handle {
  const transaction = context?.transaction;
  if (transaction === undefined || transaction === null || !kind.is(transaction)) {
    throw new InvalidOptionsError(
      `transactionOf: no ${kind.name} transaction in this context; is this store the one the handler runs on?`,
    );
  }
  return transaction;
}

/** Refuses a handle that is not this ORM's, or whose transaction has ended (writes through it would not join). */
export function assertJoinable<Handle>(kind: RecognisedHandles<Handle>, handle: Handle): void {
  if (!kind.is(handle) || !kind.inTransaction(handle)) {
    throw new InvalidOptionsError(`join: pass a ${kind.name} transaction that is open (inside its callback)`);
  }
}
