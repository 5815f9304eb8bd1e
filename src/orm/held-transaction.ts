/**
 * @module An ORM transaction held open across calls. ORMs open transactions around a callback
 * (`db.transaction(async (tx) => …)`): the ORM commits when the callback resolves and rolls back when it throws.
 * A claim needs the transaction's object now and its end later (when the handler's outcome is known), so the
 * callback hands its object out and waits for the decision.
 */
import type { SqlDriver, TransactionOptions } from './driver.js';

/** Thrown inside the ORM's callback to make the ORM roll back; never seen outside. */
class RollBack extends Error {
  constructor() {
    super('oncely rolls this transaction back');
    this.name = 'RollBack';
  }
}

export interface HeldTransaction<Handle> {
  readonly handle: Handle;
  /**
   * Ends the transaction: `true` lets the ORM commit, `false` makes it roll back. Resolves once the ORM finished;
   * rejects when a commit failed (or, for `false`, when the rollback itself failed).
   */
  end(commit: boolean): Promise<void>;
}

/** Opens a transaction through the ORM and resolves with its object as soon as the ORM hands it over. */
export function heldTransaction<Handle>(
  driver: Pick<SqlDriver<Handle>, 'transaction'>,
  options: TransactionOptions,
): Promise<HeldTransaction<Handle>> {
  let decide!: (commit: boolean) => void;
  const decided = new Promise<boolean>((resolve) => {
    decide = resolve;
  });
  return new Promise((resolve, reject) => {
    let handedOut = false;
    const finished = driver.transaction(async (handle) => {
      handedOut = true;
      resolve({ handle, end });
      if (!(await decided)) throw new RollBack();
    }, options);
    async function end(commit: boolean): Promise<void> {
      decide(commit);
      try {
        await finished;
      } catch (error) {
        if (!(error instanceof RollBack)) throw error;
      }
    }
    // The ORM failed before handing the transaction out (no connection, BEGIN refused): nothing is held.
    finished.catch((error) => {
      if (!handedOut) reject(error);
    });
  });
}
