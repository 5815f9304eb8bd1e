/**
 * @module The MySQL benchmark's databases: a table of oncely's and a payments table of the run's own on MariaDB
 * (dropped at the end, with the store's procedures), one pool per driver made as docs/stores/mysql.md makes them,
 * the PostgreSQL side as the PostgreSQL benchmark opens it, and the server CPU readings: the pool's backends and
 * every postgres process on PostgreSQL, the one mariadbd process (threads, not processes) on MariaDB.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import * as mariadb from 'mariadb';
import mysql from 'mysql2/promise';
import { MySqlStore } from '../../src/stores/mysql/index.js';
import { routinesOf } from '../../src/stores/mysql/sql.js';
import { versionOf } from '../orm/fixtures.js';
import { type Bench, startBench } from '../postgres/fixtures.js';

export const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

export interface MariaDb {
  /** oncely's table (the store's `table` option); its payments table is `<table>_payments`. */
  readonly table: string;
  readonly payments: string;
  /** A pool of `mysql2/promise`, as the store's page makes it, with `connectionLimit` set. */
  readonly mysql2: mysql.Pool;
  /** A pool of the `mariadb` connector, as the store's page makes it. */
  readonly mariadb: mariadb.Pool;
  /** `10.11.19-MariaDB-0+deb12u1`. */
  readonly version: string;
  close(): Promise<void>;
}

/** Both drivers' pools on the machine's MariaDB, oncely's table migrated by the store and a payments table. */
export async function openMariaDb(poolSize: number): Promise<MariaDb> {
  const table = `oncely_bench_${randomBytes(3).toString('hex')}`;
  const payments = `${table}_payments`;
  const url = new URL(MYSQL_URL);
  const mysql2Pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: poolSize });
  const mariadbPool = mariadb.createPool({
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database: url.pathname.slice(1),
    connectionLimit: poolSize,
  });
  await new MySqlStore({ pool: mysql2Pool, table }).migrate();
  await mysql2Pool.query(
    `CREATE TABLE \`${payments}\` (id BIGINT AUTO_INCREMENT PRIMARY KEY, order_id VARCHAR(64) NOT NULL,
       cents INT NOT NULL, created_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)) ENGINE=InnoDB`,
  );
  const [rows] = await mysql2Pool.query('SELECT VERSION() AS version');
  const version = String((rows as { version: string }[])[0]?.version);
  return {
    table,
    payments,
    mysql2: mysql2Pool,
    mariadb: mariadbPool,
    version,
    async close() {
      // Every procedure the store's migration made for the table, whatever their number in this version.
      const routines = Object.entries(routinesOf(table)).flatMap(([what, name]) =>
        what === 'table' ? [] : [name],
      );
      for (const statement of [
        `DROP TABLE IF EXISTS \`${table}\``,
        `DROP TABLE IF EXISTS \`${payments}\``,
        ...routines.map((routine) => `DROP PROCEDURE IF EXISTS \`${routine}\``),
      ]) {
        await mysql2Pool.query(statement);
      }
      await mysql2Pool.end();
      await mariadbPool.end();
    },
  };
}

/** The PostgreSQL side, as the PostgreSQL benchmark opens it: a schema of its own, a pool whose backends are known. */
export function openPostgres(poolSize: number): Promise<Bench> {
  return startBench(poolSize);
}

/** utime + stime of one process's /proc stat line, in clock ticks (100 Hz). */
function ticksOf(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

function pidsNamed(name: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) pids.push(Number(entry));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return pids;
}

/** CPU ticks per process id at one moment: read before and after, `cpuBetween` tells the µs spent between. */
export type ServerCpuReading = ReadonlyMap<number, number>;

/** Reads the CPU ticks of some server processes now. */
export type ServerCpu = () => ServerCpuReading;

/** µs of CPU the processes spent from `before` to `after`: a process that started between counts from 0. */
export function cpuBetween(before: ServerCpuReading, after: ServerCpuReading): number {
  let ticks = 0;
  for (const [pid, now] of after) ticks += now - (before.get(pid) ?? 0);
  return ticks * 10_000;
}

/**
 * Every process named `name` (`postgres`: the postmaster, its background workers and every backend, other
 * clients' included; `mariadbd`: the one server process, whose utime + stime sums all its threads). A process
 * that ended between two readings takes the CPU it spent since the first with it: short-lived backends of other
 * clients are missed, which only lowers their noise.
 */
export function serverProcesses(name: 'postgres' | 'mariadbd'): ServerCpu {
  return () => {
    const reading = new Map<number, number>();
    for (const pid of pidsNamed(name)) {
      const ticks = ticksOf(pid);
      if (ticks !== undefined) reading.set(pid, ticks);
    }
    if (reading.size === 0)
      throw new Error(`no ${name} process found in /proc: is the server on this machine?`);
    return reading;
  };
}

/** The given processes only (the PostgreSQL pool's backends, listed when its connections were opened). */
export function processesById(pids: readonly number[]): ServerCpu {
  return () => {
    const reading = new Map<number, number>();
    for (const pid of pids) {
      const ticks = ticksOf(pid);
      if (ticks !== undefined) reading.set(pid, ticks);
    }
    return reading;
  };
}

/** The measured drivers and their versions, for the environment line. */
export function driverVersions(): string[] {
  return [`pg ${versionOf('pg')}`, `mysql2 ${versionOf('mysql2')}`, `mariadb ${versionOf('mariadb')}`];
}
