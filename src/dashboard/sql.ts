/**
 * @module The dashboard's own SQL (outbox topics and dead letters, the PostgreSQL event log), embedded at build time
 * as `.sql` files and rendered here with names already validated and quoted.
 */
import deadLettersSql from './sql/dead-letters.sql.generated.js';
import eventsFlushSql from './sql/events-flush.sql.generated.js';
import eventsReadSql from './sql/events-read.sql.generated.js';
import eventsSchemaSql from './sql/events-schema.sql.generated.js';
import outboxTopicsSql from './sql/outbox-topics.sql.generated.js';

/** Already quoted names to splice into the templates (validated at construction, never request input). */
export interface SqlNames {
  readonly schema?: string;
  readonly table?: string;
  readonly events?: string;
  readonly counts?: string;
}

/** A template with its `{{name}}` placeholders filled and its comment lines dropped. */
function render(template: string, names: SqlNames): string {
  return template
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n')
    .replace(/\{\{(\w+)\}\}/g, (_, name: keyof SqlNames) => {
      const value = names[name];
      if (value === undefined) throw new Error(`dashboard sql: no value for {{${name}}}`);
      return value;
    });
}

export const dashboardSql = {
  outboxTopics: (table: string) => render(outboxTopicsSql, { table }),
  deadLetters: (table: string) => render(deadLettersSql, { table }),
  eventsSchema: (names: Required<Pick<SqlNames, 'schema' | 'events' | 'counts'>>) =>
    render(eventsSchemaSql, names),
  eventsFlush: (names: Required<Pick<SqlNames, 'events' | 'counts'>>) => render(eventsFlushSql, names),
  eventsRead: (names: Required<Pick<SqlNames, 'events' | 'counts'>>) => render(eventsReadSql, names),
};
