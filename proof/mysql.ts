/**
 * @module The proof's stores on MariaDB (`oncely/mysql`; kinds `mysql` and `mysql-tx`). The harness's side: the
 * run's table (made by the store's `migrate`, dropped after the run), its restart fault and a peek at a record.
 * The app server's side: the store on a mysql2 pool through the fault proxy, made as docs/stores/mysql.md shows,
 * and in transactional mode the payment row written through `connectionOf(context)` into a payments table in the
 * same database, which the ledger reads (proof/ledger.ts).
 *
 * The machine's MariaDB is shared with other work, so it is never restarted: its restart fault is what a restart
 * does to the app. The proxy refuses new connections for the down time, and every app session is KILLed on the
 * server (its open transaction rolled back, as a crash rolls it back), three rounds over 600 ms. The app's
 * sessions are told from everyone else's by the client port the server sees for them: the proxy's own end of
 * each connection.
 */
import mysql from 'mysql2/promise';
import type { Store } from '../src/core/store.js';
import { connectionOf, MySqlStore, migrate } from '../src/stores/mysql/index.js';
import type { PaymentValues } from './orm-stores.js';
import { startFaultProxy } from './proxy.js';
import type { StoreUnderTest } from './stores.js';
import type { MySqlStoreKind, StoreConnection } from './types.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The run's tables in MariaDB, named after the run's ledger schema. */
export function mysqlTables(schema: string): { readonly table: string; readonly payments: string } {
  return { table: `${schema}_keys`, payments: `${schema}_payments` };
}

/** A pool straight to the server (never through the proxy): the harness's, the ledger's. */
export function directPool(url: string, size = 2): mysql.Pool {
  return mysql.createPool({ uri: url, connectionLimit: size });
}

export async function startMySqlStore(
  kind: MySqlStoreKind,
  url: string,
  schema: string,
  keep: boolean,
): Promise<StoreUnderTest> {
  const { table, payments } = mysqlTables(schema);
  const admin = directPool(url);
  await migrate(admin, { table });
  const proxy = await startFaultProxy(Number(new URL(url).port || 3306));
  const viaProxy = new URL(url);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);

  /** KILLs every server session whose client port is the proxy's end of an app connection; returns how many. */
  async function killAppSessions(): Promise<number> {
    const ports = new Set(proxy.upstreamPorts());
    const [rows] = await admin.query<mysql.RowDataPacket[]>(
      'SELECT ID, HOST FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()',
    );
    let killed = 0;
    for (const row of rows) {
      const host = String(row.HOST ?? '');
      if (!ports.has(Number(host.slice(host.lastIndexOf(':') + 1)))) continue;
      // A session that ended on its own meanwhile is "unknown thread": nothing to do.
      await admin.query('KILL CONNECTION ?', [row.ID]).then(
        () => killed++,
        () => {},
      );
    }
    return killed;
  }

  return {
    kind,
    connection: { kind, url: viaProxy.toString(), table, payments },
    proxies: [proxy],
    restartLabel: { name: 'store down: sessions KILLed, connections refused', kind: 'backend-terminate' },
    async restart(downMs) {
      const startedAt = Date.now();
      proxy.refuse(true);
      let killed = 0;
      try {
        for (let round = 0; round < 3; round++) {
          if (round > 0) await sleep(300);
          killed += await killAppSessions();
        }
        await sleep(startedAt + downMs - Date.now());
      } finally {
        proxy.refuse(false);
      }
      return `MariaDB (shared, so never restarted): new connections refused for ${Date.now() - startedAt} ms, every app session KILLed on the server (open transactions rolled back), 3 rounds over 600 ms: ${killed} session(s)`;
    },
    async peek(id) {
      const [rows] = await admin.query<mysql.RowDataPacket[]>(
        `SELECT state, CAST(token AS DOUBLE) AS token FROM \`${table}\` WHERE \`key\` = ?`,
        [id],
      );
      return rows[0] as { state: 'inProgress' | 'completed' | 'released'; token: number } | undefined;
    },
    async close() {
      await proxy.close();
      if (!keep) {
        // Every procedure `migrate` made beside the table (their names start with the table's: it is short).
        const [routines] = await admin.query<mysql.RowDataPacket[]>(
          'SELECT ROUTINE_NAME AS name FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME LIKE ?',
          [`${table}\\_%`],
        );
        await admin.query(`DROP TABLE IF EXISTS \`${table}\``);
        for (const { name } of routines) await admin.query(`DROP PROCEDURE IF EXISTS \`${name}\``);
      }
      await admin.end();
    },
  };
}

export interface MySqlStoreOfServer {
  readonly store: Store;
  /** Transactional mode only: inserts the payment through the claim's transaction. */
  readonly pay:
    | ((context: { readonly transaction?: unknown }, payment: PaymentValues) => Promise<void>)
    | undefined;
  close(): Promise<void>;
}

/** The app server's store: the pool and the store as the store page makes them, through the proxy. */
export function openMySqlStore(
  connection: Extract<StoreConnection, { kind: MySqlStoreKind }>,
  settings: { readonly poolSize: number; readonly connectTimeoutMs: number },
): MySqlStoreOfServer {
  const pool = mysql.createPool({
    uri: connection.url,
    connectionLimit: settings.poolSize,
    connectTimeout: settings.connectTimeoutMs,
  });
  const plain = new MySqlStore({ pool, table: connection.table });
  const close = () => pool.end().catch(() => {});
  if (connection.kind === 'mysql') return { store: plain, pay: undefined, close };
  return {
    store: plain.transactional(),
    async pay(context, p) {
      await connectionOf(context).query(
        `INSERT INTO \`${connection.payments}\` (\`key\`, id, token, pid, server, at_ms, backend, tx_started_ms)
         VALUES (?, ?, ?, ?, ?, ?, CONNECTION_ID(), NULL)`,
        [p.key, p.id, p.token, p.pid, p.server, p.at],
      );
    },
    close,
  };
}
