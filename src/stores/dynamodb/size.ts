/**
 * @module An item's size as DynamoDB counts it against its 400 KB limit (names and values in bytes, after AWS's
 * "Item sizes and formats" page), so `complete` can refuse an outcome that cannot fit before sending it.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { Item } from './item.js';

/** DynamoDB's limit on one item: 400 KB, attribute names included. */
export const MAX_ITEM_BYTES = 400 * 1024;

const utf8 = (text: string): number => Buffer.byteLength(text, 'utf8');

/** Bytes of a number: one per two significant digits, plus one. */
function numberBytes(text: string): number {
  const digits = text.replace(/^[-+]/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(digits.length, 1) / 2) + 1;
}

export function valueBytes(value: AttributeValue): number {
  if (value.S !== undefined) return utf8(value.S);
  if (value.N !== undefined) return numberBytes(value.N);
  if (value.B !== undefined) return value.B.byteLength;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  // A list or map costs 3 bytes, and 1 more per element, whatever the elements hold.
  if (value.L !== undefined) return value.L.reduce((sum, element) => sum + 1 + valueBytes(element), 3);
  if (value.M !== undefined) return 3 + itemBytes(value.M) + Object.keys(value.M).length;
  return 0;
}

export function itemBytes(item: Item): number {
  let total = 0;
  for (const [name, value] of Object.entries(item)) total += utf8(name) + valueBytes(value);
  return total;
}
