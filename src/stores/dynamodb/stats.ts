/**
 * @module The DynamoDB store's stats: DescribeTable's item count and size, one call whatever the table holds.
 */
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import type { StoreStats } from '../../core/store.js';
import { storeError } from './errors.js';
import type { DynamoTable } from './table.js';

/**
 * DynamoDB's own approximation (refreshed about every six hours): every item, tombstones and records past their
 * retention that TTL has not removed yet included, and the table's bytes.
 */
export async function describeTable(table: DynamoTable): Promise<StoreStats> {
  try {
    const { Table } = await table.client.send(new DescribeTableCommand({ TableName: table.name }));
    return { records: Table?.ItemCount ?? 0, bytes: Table?.TableSizeBytes ?? 0 };
  } catch (error) {
    throw storeError('stats', table.name, error);
  }
}
