/**
 * @module The calls the DynamoDB store sends, each mapped to what the store needs: a conditional write that was
 * refused comes back as the item DynamoDB found (an answer), every other failure as an `OncelyError`
 * (errors.ts). Expression attribute names are used for every attribute, since several of the layout's names
 * (`state`, `status`, `token`, `ttl`) are DynamoDB reserved words.
 */
import {
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  ScanCommand,
  type ScanCommandOutput,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { isConditionFailed, isItemTooLarge, OutcomeTooLargeError, storeError } from './errors.js';
import type { Item } from './item.js';
import { MAX_ITEM_BYTES } from './size.js';

/** A conditional write's answer: done, or refused with the item as DynamoDB found it (when it sent one). */
export type WriteResult =
  | { readonly done: true }
  | { readonly done: false; readonly found: Item | undefined };

/** `#name` for each attribute name, for `ExpressionAttributeNames`. */
export function namesOf(names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.map((name) => [`#${name}`, name]));
}

export interface Update {
  readonly set: Item;
  readonly condition: string;
  readonly values: Item;
  /** Attribute names the condition uses beyond those set. */
  readonly conditionNames: readonly string[];
  readonly remove?: readonly string[];
}

export class DynamoTable {
  constructor(
    readonly client: DynamoDBClient,
    readonly name: string,
  ) {}

  /** Writes the whole item if `condition` holds; a refusal answers with the item found (same round trip). */
  async put(operation: string, item: Item, condition: string, values: Item, names: readonly string[]) {
    const command = new PutItemCommand({
      TableName: this.name,
      Item: item,
      ConditionExpression: condition,
      ExpressionAttributeNames: namesOf(names),
      ExpressionAttributeValues: values,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    return this.#write(operation, () => this.client.send(command));
  }

  /** Sets attributes if `condition` holds. A refusal says only that (no item back: nothing to decide from it). */
  async update(operation: string, key: string, update: Update): Promise<WriteResult> {
    const set = Object.keys(update.set);
    const remove = update.remove ?? [];
    const expression =
      `SET ${set.map((name) => `#${name} = :${name}`).join(', ')}` +
      (remove.length === 0 ? '' : ` REMOVE ${remove.map((name) => `#${name}`).join(', ')}`);
    const values = Object.fromEntries(Object.entries(update.set).map(([name, value]) => [`:${name}`, value]));
    const command = new UpdateItemCommand({
      TableName: this.name,
      Key: { pk: { S: key } },
      UpdateExpression: expression,
      ConditionExpression: update.condition,
      ExpressionAttributeNames: namesOf([...set, ...remove, ...update.conditionNames]),
      ExpressionAttributeValues: { ...values, ...update.values },
    });
    return this.#write(operation, () => this.client.send(command));
  }

  /** A strongly consistent read of one item; `names` limits the attributes read. */
  async get(operation: string, key: string, names?: readonly string[]): Promise<Item | undefined> {
    const command = new GetItemCommand({
      TableName: this.name,
      Key: { pk: { S: key } },
      ConsistentRead: true,
      ...(names === undefined
        ? {}
        : {
            ProjectionExpression: names.map((name) => `#${name}`).join(', '),
            ExpressionAttributeNames: namesOf(names),
          }),
    });
    try {
      return (await this.client.send(command)).Item;
    } catch (error) {
      throw storeError(operation, this.name, error);
    }
  }

  /** One page of a strongly consistent scan: at most `limit` items read, the attributes in `names`. */
  async scan(
    names: readonly string[],
    limit: number,
    start: Item | undefined,
    prefix: string | undefined,
  ): Promise<ScanCommandOutput> {
    const command = new ScanCommand({
      TableName: this.name,
      ConsistentRead: true,
      Limit: limit,
      ProjectionExpression: names.map((name) => `#${name}`).join(', '),
      ExpressionAttributeNames: namesOf(names),
      ...(start === undefined ? {} : { ExclusiveStartKey: start }),
      ...(prefix === undefined
        ? {}
        : {
            FilterExpression: 'begins_with(#pk, :prefix)',
            ExpressionAttributeValues: { ':prefix': { S: prefix } },
          }),
    });
    try {
      return await this.client.send(command);
    } catch (error) {
      throw storeError('survey', this.name, error);
    }
  }

  async #write(operation: string, send: () => Promise<unknown>): Promise<WriteResult> {
    try {
      await send();
      return { done: true };
    } catch (error) {
      if (isConditionFailed(error)) return { done: false, found: (error as { Item?: Item }).Item };
      // Only an outcome grows an item: the store's own refusal before sending (size.ts) is the first check, and
      // DynamoDB's count, which includes what the claim wrote (fingerprint, label), the last word.
      if (operation === 'complete' && isItemTooLarge(error))
        throw new OutcomeTooLargeError(this.name, undefined, MAX_ITEM_BYTES, { cause: error });
      throw storeError(operation, this.name, error);
    }
  }
}
