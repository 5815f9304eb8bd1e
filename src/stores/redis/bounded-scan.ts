/**
 * @module One node's SCAN, bounded by the keys it walks: what the inspector and `stats` both walk with. MATCH
 * filters after the walk, so in a Redis where oncely's records are a few among millions of other keys, a bound on
 * the keys found would still walk them all; each call's COUNT (the work it does) is taken from the budget instead.
 */
import type { RedisNode } from './transport.js';

const SCAN_COUNT = 500;

/** How many keys a walk may still visit, all nodes together. */
export interface ScanBudget {
  readonly left: number;
  spend(keys: number): void;
}

/** A budget of `limit` keys. */
export class KeyBudget implements ScanBudget {
  #left: number;

  constructor(limit: number) {
    this.#left = limit;
  }

  get left(): number {
    return this.#left;
  }

  spend(keys: number): void {
    this.#left -= keys;
  }
}

/**
 * Walks `node` with `SCAN … MATCH pattern`, handing each batch of matching keys to `found`. Resolves true when
 * the walk reached the end of the node, false when the budget ran out first (the caller's result is truncated).
 */
export async function scanWithin(
  node: RedisNode,
  pattern: string,
  budget: ScanBudget,
  found: (keys: string[]) => Promise<void>,
): Promise<boolean> {
  let cursor = '0';
  do {
    if (budget.left <= 0) return false;
    const count = Math.min(SCAN_COUNT, budget.left);
    budget.spend(count);
    const [reply] = await node.send([['SCAN', cursor, 'MATCH', pattern, 'COUNT', count]]);
    if (reply instanceof Error) throw reply;
    const [next, keys] = Array.isArray(reply) ? reply : [];
    if (!Array.isArray(keys)) throw new Error(`redis SCAN: unexpected reply ${String(reply)}`);
    cursor = String(next);
    if (keys.length > 0) await found(keys.map(String));
  } while (cursor !== '0');
  return true;
}
