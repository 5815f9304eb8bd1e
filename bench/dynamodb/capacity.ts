/**
 * @module What each DynamoDB call of the store costs, seen from the client: a middleware on the client's own stack
 * that asks every item call for `ReturnConsumedCapacity: 'TOTAL'` and records the command and the capacity units
 * the answer reports. A refused conditional write answers with `ConditionalCheckFailedException`, which carries no
 * `ConsumedCapacity` (the API has no such field on the error, on DynamoDB as on dynalite), yet DynamoDB bills it:
 * by its documented rule, the size of the item it found in 1 KB units, at least 1. Those units are computed from
 * the item the refusal returns, by the store's own item-size count (AWS's "Item sizes and formats" rules), and
 * marked as computed.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Item } from '../../src/stores/dynamodb/item.js';
import { itemBytes } from '../../src/stores/dynamodb/size.js';

/** One call the store sent. */
export interface Call {
  /** `PutItem`, `UpdateItem`, `GetItem`. */
  readonly command: string;
  /** Refused by its condition (the answer, not an error, for the store). */
  readonly refused: boolean;
  readonly wcu: number;
  readonly rcu: number;
  /** The units were computed from DynamoDB's billing rule, not reported by the answer. */
  readonly computed: boolean;
  /** A refusal's: the bytes of the item it returned (the one it met), when it returned one. */
  readonly metBytes?: number;
}

// The calls that take ReturnConsumedCapacity; the store's others (DescribeTable, CreateTable…) are not metered.
const ITEM_CALLS = new Set(['PutItem', 'UpdateItem', 'GetItem', 'DeleteItem', 'Scan']);
const READS = new Set(['GetItem', 'Scan']);

/** Write units DynamoDB bills a refused conditional write: the item it found, per 1 KB, at least 1. */
export function refusedWriteUnits(found: Item | undefined): number {
  return Math.max(1, Math.ceil((found === undefined ? 0 : itemBytes(found)) / 1024));
}

/**
 * Meters `client`: while `log()` returns a list, every item call asks for its consumed capacity and is recorded
 * there; otherwise calls pass untouched.
 */
export function meterCapacity(client: DynamoDBClient, log: () => Call[] | undefined): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const calls = log();
      const command = (context.commandName ?? '?').replace(/Command$/, '');
      if (calls === undefined || !ITEM_CALLS.has(command)) return next(args);
      const input = { ...(args.input as object), ReturnConsumedCapacity: 'TOTAL' };
      const read = READS.has(command);
      try {
        const result = await next({ ...args, input });
        const units = (result.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity
          ?.CapacityUnits;
        // An answer without units means the request went out without ReturnConsumedCapacity: the table would
        // show 0 for a call that costs at least 1, so the run stops instead.
        if (units === undefined) throw new Error(`${command}: the answer reports no consumed capacity`);
        calls.push({
          command,
          refused: false,
          wcu: read ? 0 : units,
          rcu: read ? units : 0,
          computed: false,
        });
        return result;
      } catch (error) {
        if ((error as { name?: unknown } | null)?.name === 'ConditionalCheckFailedException') {
          const found = (error as { Item?: Item }).Item;
          calls.push({
            command,
            refused: true,
            wcu: refusedWriteUnits(found),
            rcu: 0,
            computed: true,
            ...(found === undefined ? {} : { metBytes: itemBytes(found) }),
          });
        }
        throw error;
      }
    },
    { step: 'initialize', name: 'oncelyBenchCapacity' },
  );
}
