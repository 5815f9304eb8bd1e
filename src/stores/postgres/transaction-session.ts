/**
 * @module The connection a transactional claim holds, and how its unit of work opens, is undone and finishes: a
 * whole transaction of the store's own, or a savepoint in the caller's transaction (joined mode).
 */
import type { Client, PoolClient } from 'pg';
import { storeError } from './errors.js';

export type IsolationLevel = 'read committed' | 'repeatable read' | 'serializable';

export interface Scope {
  /** True for a savepoint in the caller's transaction, whose top-level transaction is theirs to end. */
  readonly joined: boolean;
  readonly open: string;
  readonly undo: string;
  readonly finish: string;
}

export const savepointScope: Scope = {
  joined: true,
  open: 'SAVEPOINT oncely_claim',
  undo: 'ROLLBACK TO SAVEPOINT oncely_claim; RELEASE SAVEPOINT oncely_claim',
  finish: 'RELEASE SAVEPOINT oncely_claim',
};

export const transactionScope = (isolation: IsolationLevel): Scope => ({
  joined: false,
  open: `BEGIN ISOLATION LEVEL ${isolation.toUpperCase()}`,
  undo: 'ROLLBACK',
  finish: 'COMMIT',
});

export interface Session {
  readonly client: Client | PoolClient;
  readonly scope: Scope;
  broken: boolean;
}

/** Undoes the unit of work; a connection that cannot is marked broken (the server rolls back when it notices). */
export async function undo(session: Session): Promise<void> {
  try {
    await session.client.query(session.scope.undo);
  } catch {
    session.broken = true;
  }
}

export async function finish(session: Session): Promise<void> {
  try {
    const result = await session.client.query(session.scope.finish);
    if (result.command === 'ROLLBACK')
      throw new Error('COMMIT answered ROLLBACK: the transaction had failed');
  } catch (error) {
    session.broken = true;
    const unknown = 'whether it committed is unknown; a retry replays the outcome or runs once more';
    throw storeError(`commit (${unknown})`, error);
  }
}
