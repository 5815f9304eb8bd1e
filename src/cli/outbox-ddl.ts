import schemaSql from '../messaging/outbox/schema.sql.generated.js';
import { outboxTable } from '../messaging/outbox/table.js';

/**
 * The outbox DDL that `migrate` from oncely/outbox runs, as a standalone script. That function sets search_path
 * to the schema inside its own transaction, and schema.sql names the table unqualified; a printed script cannot
 * rely on a search_path, so every reference to the table is qualified here instead. Index names stay
 * unqualified: PostgreSQL creates an index in its table's schema. test/cli/postgres.test.ts checks the result
 * against what `oncely migrate` creates, column by column and index by index.
 */
export function outboxDdl(schema: string): string {
  const { name } = outboxTable(schema);
  const statements = schemaSql
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n')
    // `\b` on both sides: the table's name, not the index names that start with it (oncely_outbox_pending).
    .replace(/\boncely_outbox\b/g, name)
    .trim();
  return `CREATE SCHEMA IF NOT EXISTS "${schema}";\n\n${statements}\n`;
}
