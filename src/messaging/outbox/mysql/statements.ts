/**
 * @module The MySQL outbox's SQL: the statements of ../sql/mysql (embedded at build time) rendered for one pair of
 * tables and, for a relay limited to topics, its topic filter; comments dropped, the server's clock spliced in.
 */
import claimHeadsSql from '../sql/mysql/claim-heads.sql.generated.js';
import claimLeaseSql from '../sql/mysql/claim-lease.sql.generated.js';
import claimLockSql from '../sql/mysql/claim-lock.sql.generated.js';
import deadChosenSql from '../sql/mysql/dead-chosen.sql.generated.js';
import deletePublishedSql from '../sql/mysql/delete-published.sql.generated.js';
import discardDeadLettersSql from '../sql/mysql/discard-dead-letters.sql.generated.js';
import failSql from '../sql/mysql/fail.sql.generated.js';
import failHeldSql from '../sql/mysql/fail-held.sql.generated.js';
import forgetKeysSql from '../sql/mysql/forget-keys.sql.generated.js';
import giveBackSql from '../sql/mysql/give-back.sql.generated.js';
import idleKeysSql from '../sql/mysql/idle-keys.sql.generated.js';
import insertSql from '../sql/mysql/insert.sql.generated.js';
import keySeqsSql from '../sql/mysql/key-seqs.sql.generated.js';
import listDeadLettersSql from '../sql/mysql/list-dead-letters.sql.generated.js';
import lockDeadSql from '../sql/mysql/lock-dead.sql.generated.js';
import lockIdleKeysSql from '../sql/mysql/lock-idle-keys.sql.generated.js';
import lockKeySql from '../sql/mysql/lock-key.sql.generated.js';
import markPublishedSql from '../sql/mysql/mark-published.sql.generated.js';
import migrateSql from '../sql/mysql/migrate.sql.generated.js';
import oldestTransactionSql from '../sql/mysql/oldest-transaction.sql.generated.js';
import probeSql from '../sql/mysql/probe.sql.generated.js';
import purgeChosenSql from '../sql/mysql/purge-chosen.sql.generated.js';
import purgePublishedSql from '../sql/mysql/purge-published.sql.generated.js';
import replaySql from '../sql/mysql/replay.sql.generated.js';
import statsSql from '../sql/mysql/stats.sql.generated.js';
import unusedKeysSql from '../sql/mysql/unused-keys.sql.generated.js';
import type { MySqlOutboxTables } from './table.js';

/**
 * The server's time in milliseconds since the epoch, from UTC (as the MySQL store reads it): no session time zone
 * or DST step moves it, and it is one value throughout a statement.
 */
const SERVER_CLOCK =
  "CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000 AS SIGNED)";

/** The writer's statements (the caller's connection, inside the caller's transaction). */
export interface MySqlWriterStatements {
  readonly lockKey: string;
  readonly probe: string;
  readonly insert: string;
}

/** The relay's and the maintenance functions' statements. `:topics` in them is the topic list, when limited. */
export interface MySqlOutboxStatements {
  readonly claimHeads: string;
  readonly claimLock: string;
  readonly claimLease: string;
  readonly markPublished: string;
  readonly deletePublished: string;
  readonly giveBack: string;
  readonly failHeld: string;
  readonly fail: string;
  readonly purgeChosen: string;
  readonly purgePublished: string;
  readonly idleKeys: string;
  readonly lockIdleKeys: string;
  readonly unusedKeys: string;
  readonly forgetKeys: string;
  readonly stats: string;
  readonly oldestTransaction: string;
  readonly listDeadLetters: string;
  readonly discardDeadLetters: string;
  readonly deadChosen: string;
  readonly lockDead: string;
  readonly lockKey: string;
  readonly keySeqs: string;
  readonly replay: string;
}

function render(template: string, tables: MySqlOutboxTables, fragments: Record<string, string> = {}) {
  let text = template
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n')
    .replaceAll('{{table}}', tables.table)
    .replaceAll('{{keys}}', tables.keys)
    .replaceAll('{{now}}', SERVER_CLOCK);
  for (const [name, fragment] of Object.entries(fragments)) text = text.replaceAll(`{{${name}}}`, fragment);
  return text.trim();
}

const rendered = new Map<string, MySqlOutboxStatements>();

/** Every statement of one outbox; `limited`: filtered by the `:topics` list (a relay's `topics` option). */
export function mysqlStatements(tables: MySqlOutboxTables, limited: boolean): MySqlOutboxStatements {
  const id = `${tables.table}|${limited}`;
  let statements = rendered.get(id);
  if (statements === undefined) {
    const topics = limited ? 'AND o.topic IN (:topics)' : '';
    const plain = limited ? 'AND topic IN (:topics)' : '';
    const probe = limited ? 'AND p.topic IN (:topics)' : '';
    statements = {
      claimHeads: render(claimHeadsSql, tables, {
        topics,
        probe_topics: probe,
        scan_index: limited ? 'oncely_outbox_state_topic_id' : 'oncely_outbox_state_id',
      }),
      claimLock: render(claimLockSql, tables),
      claimLease: render(claimLeaseSql, tables),
      markPublished: render(markPublishedSql, tables),
      deletePublished: render(deletePublishedSql, tables),
      giveBack: render(giveBackSql, tables),
      failHeld: render(failHeldSql, tables),
      fail: render(failSql, tables),
      purgeChosen: render(purgeChosenSql, tables, { topics: plain }),
      purgePublished: render(purgePublishedSql, tables),
      idleKeys: render(idleKeysSql, tables),
      lockIdleKeys: render(lockIdleKeysSql, tables),
      unusedKeys: render(unusedKeysSql, tables),
      forgetKeys: render(forgetKeysSql, tables),
      stats: render(statsSql, tables, { topics }),
      oldestTransaction: render(oldestTransactionSql, tables),
      listDeadLetters: render(listDeadLettersSql, tables),
      discardDeadLetters: render(discardDeadLettersSql, tables),
      deadChosen: render(deadChosenSql, tables),
      lockDead: render(lockDeadSql, tables),
      lockKey: render(lockKeySql, tables),
      keySeqs: render(keySeqsSql, tables),
      replay: render(replaySql, tables),
    };
    rendered.set(id, statements);
  }
  return statements;
}

export function mysqlWriterStatements(tables: MySqlOutboxTables): MySqlWriterStatements {
  const { lockKey } = mysqlStatements(tables, false);
  return { lockKey, probe: render(probeSql, tables), insert: render(insertSql, tables) };
}

/** The DDL, one statement per entry (the script's statements end with `;` at a line's end). */
export function mysqlMigrationStatements(tables: MySqlOutboxTables): string[] {
  return render(migrateSql, tables)
    .split(/;\s*$/m)
    .map((statement) => statement.trim())
    .filter((statement) => statement !== '');
}
