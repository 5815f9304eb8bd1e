/**
 * @module The outbox DDL as a standalone script, for `oncely migrate --print`.
 */
import { migrationScript } from '../messaging/outbox/sql.js';
import { outboxTable } from '../messaging/outbox/table.js';

/**
 * The outbox DDL that `migrate` from oncely/outbox runs, as a standalone script: the same statements (they set a
 * transaction-local search_path to the schema, so they run inside BEGIN … COMMIT, as `migrate` runs them).
 * test/cli/postgres.test.ts checks the result against what `oncely migrate` creates, column by column and index
 * by index.
 */
export function outboxDdl(schema: string): string {
  return `BEGIN;\n${migrationScript(outboxTable(schema)).trim()};\nCOMMIT;\n`;
}
