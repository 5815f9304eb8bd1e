/**
 * @module `transactionOf(context)`: how code running under a transactional claim reaches the claim's own `pg`
 * client, so its writes commit or roll back with the key's record; refused, with a typed error, where there is no
 * such transaction.
 */
import type { Client } from 'pg';
import { InvalidOptionsError } from '../../core/errors.js';

/**
 * The transaction's `pg` client from the context oncely hands your code in transactional mode: write through it
 * and your rows commit or roll back with the key's record. Throws when the store is not transactional, because
 * writes through any other connection would commit on their own. Takes any context oncely hands out (a claim, an
 * `idempotent()` context, `res.locals.idempotency`, `c.get('idempotency')`, `request.idempotency`), or none.
 *
 * @example
 * const pay = idempotent(async (order: Order, context) => {
 *   const client = transactionOf(context);
 *   await client.query('INSERT INTO payments (order_id, amount) VALUES ($1, $2)', [order.id, order.amount]);
 *   return { paid: order.amount };
 * }, { store: store.transactional(), key: (order) => order.id });
 */
export function transactionOf(context: { readonly transaction?: unknown } | null | undefined): Client {
  const transaction = context?.transaction;
  if (transaction === null || typeof transaction !== 'object' || !('query' in transaction)) {
    throw new InvalidOptionsError(
      'transactionOf: no transaction in this context; use store.transactional() as the store',
    );
  }
  return transaction as Client;
}
