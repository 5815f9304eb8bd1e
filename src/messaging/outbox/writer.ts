/**
 * @module `Outbox.add` (and the default `outbox`): an event written into the outbox table inside the caller's own
 * transaction, through a `pg` client, any ORM's transaction object (on PostgreSQL or MySQL / MariaDB), or a MySQL /
 * MariaDB connection, so it exists exactly when the business writes commit.
 */
import { InvalidOptionsError } from '../../core/errors.js';
import { knownOptions } from '../../core/validate.js';
import { handleKindOf, mysqlHandleKindOf } from '../../orm/handles.js';
import { runStatements } from '../../orm/source.js';
import { inlineParameters, type SqlValue } from '../../stores/postgres/sql.js';
import { checkHook, type OutboxInstrumentation } from '../instrumentation.js';
import { type UserConnection, userConnectionOf } from './mysql/connection.js';
import { ormConnection } from './mysql/orm-connection.js';
import { type MySqlOutboxTables, mysqlOutboxTables } from './mysql/table.js';
import { addMySql } from './mysql/writer.js';
import { type WriterStatements, writerStatements } from './sql.js';
import { type OutboxTable, outboxTable, type Queryable, type SchemaOptions } from './table.js';

/** An ORM's transaction object (recognized by shape; see `Outbox.add`). */
export type OrmTransaction = object;

/** One event to publish once the caller's transaction commits. */
export interface OutboxEvent {
  /** Where it goes: a NATS subject, a RabbitMQ routing key, a Redis stream (the publisher maps it). */
  readonly topic: string;
  /**
   * Ordering key (an order id, an account id): events of one key are published one at a time, in the order their
   * transactions committed. Writing one holds the key until the caller's transaction ends (another writer of the
   * key waits at its `add`); see sql/insert-one.sql. Omit (or null) for events that need no order: they take no
   * lock and never wait for one another.
   */
  readonly key?: string | null;
  /** A JSON value (stored as UTF-8 JSON) or bytes (`Uint8Array`/`Buffer`, stored as they are). */
  readonly payload: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** Default `application/json` for JSON payloads, `application/octet-stream` for bytes. */
  readonly contentType?: string;
}

export interface OutboxOptions extends SchemaOptions {
  /**
   * Send a NOTIFY with each write so idle relays wake at once. Only a hint (relays poll anyway): NOTIFY takes a
   * cluster-wide lock at commit, so at thousands of commits per second turn it off. Default true. PostgreSQL only:
   * MySQL has no NOTIFY, and events written through a MySQL connection wake no relay (they poll).
   */
  readonly notify?: boolean;
  /**
   * Returns the caller's trace context to save with each event (`traceparent`, `tracestate`), read at `add`
   * time, i.e. inside the request that wrote the event. Explicit event headers win over it.
   * @example traceContext: () => { const c = {}; propagation.inject(context.active(), c); return c; }
   */
  readonly traceContext?: () => Readonly<Record<string, string>> | undefined;
  /** `otel()` from `oncely/otel`: saves the active OpenTelemetry context with each event. Or `traceContext`. */
  readonly instrumentation?: OutboxInstrumentation;
}

const OPTIONS = ['schema', 'notify', 'traceContext', 'instrumentation'] as const;
const encoder = new TextEncoder();

/**
 * Writes events into `oncely_outbox` inside the caller's transaction, so they exist exactly when the business
 * writes committed. A relay (`OutboxRelay`) publishes them afterwards. The connection's kind chooses the dialect: a
 * `pg` client (PostgreSQL), a `mysql2/promise` or `mariadb` connection (MySQL / MariaDB; the table then lives in the
 * connection's database, or in database `schema` when given), or an ORM's transaction (the database its ORM speaks).
 *
 * @example
 * const client = await pool.connect();
 * await client.query('BEGIN');
 * await client.query('INSERT INTO payments (id, amount) VALUES ($1, $2)', [id, amount]);
 * await outbox.add(client, { topic: 'payment.created', key: id, payload: { id, amount } });
 * await client.query('COMMIT');
 */
export class Outbox {
  readonly table: OutboxTable;
  /** The tables on MySQL, where a `schema` left out means the connection's own database. */
  readonly #mysqlTables: MySqlOutboxTables;
  readonly #notify: boolean;
  readonly #traceContext: OutboxOptions['traceContext'];
  readonly #sql: WriterStatements;

  constructor(options: OutboxOptions = {}) {
    knownOptions('Outbox', options, OPTIONS);
    this.table = outboxTable(options.schema);
    this.#mysqlTables = mysqlOutboxTables(options.schema);
    if (options.notify !== undefined && typeof options.notify !== 'boolean') {
      throw new InvalidOptionsError('notify must be a boolean');
    }
    if (options.traceContext !== undefined && typeof options.traceContext !== 'function') {
      throw new InvalidOptionsError('traceContext must be a function returning headers');
    }
    const instrumentation = checkHook<OutboxInstrumentation>('Outbox', options.instrumentation, [
      'traceHeaders',
    ]);
    if (instrumentation !== undefined && options.traceContext !== undefined)
      throw new InvalidOptionsError('Outbox: give traceContext or instrumentation, not both');
    this.#notify = options.notify ?? true;
    this.#traceContext = options.traceContext ?? instrumentation?.traceHeaders?.bind(instrumentation);
    this.#sql = writerStatements(this.table, this.#notify);
  }

  /**
   * Inserts one event in the caller's open transaction: a `pg` client inside `BEGIN`, an ORM's transaction
   * object (a Kysely `Transaction`, a Drizzle `tx`, a Prisma transaction client, a TypeORM or MikroORM
   * `EntityManager` in a transaction, a Knex `trx`, a postgres.js `sql` of `sql.begin`; on PostgreSQL, or on MySQL /
   * MariaDB for all but postgres.js), or a `mysql2/promise` or `mariadb` connection inside a transaction (an ORM
   * object or a connection outside any is refused with `InvalidOptionsError` before anything is written). Resolves
   * with the outbox id.
   */
  async add(client: Queryable | OrmTransaction, event: OutboxEvent): Promise<string> {
    const row = this.#row(event);
    const mysql = mysqlConnectionOf(client, 'add');
    if (mysql !== undefined) {
      const [id] = await addMySql(mysql, this.#mysqlTables, [row], 'add');
      return id!;
    }
    const values = [row.topic, row.key, row.payload, row.contentType, row.headers];
    const [found] = await this.#insert(client, this.#sql.insertOne, values, 'add');
    return String(found!.id);
  }

  /**
   * Inserts several events, in order: one statement on PostgreSQL; on MySQL one lock per distinct key, then one
   * insert per event (MySQL returns one insert id per statement). Resolves with their ids, in the same order.
   */
  async addMany(client: Queryable | OrmTransaction, events: readonly OutboxEvent[]): Promise<string[]> {
    if (!Array.isArray(events)) throw new InvalidOptionsError('outbox.addMany: events must be an array');
    if (events.length === 0) return [];
    const rows = events.map((event) => this.#row(event));
    const mysql = mysqlConnectionOf(client, 'addMany');
    if (mysql !== undefined) return addMySql(mysql, this.#mysqlTables, rows, 'addMany');
    const values = [
      rows.map((r) => r.topic),
      rows.map((r) => r.key),
      rows.map((r) => r.payload),
      rows.map((r) => r.contentType),
      rows.map((r) => r.headers),
    ];
    const [found] = await this.#insert(client, this.#sql.insertMany, values, 'addMany');
    return (found!.ids as unknown[]).map(String);
  }

  /** The insert on a pg client, or through the ORM's raw query on its transaction (values inlined). */
  async #insert(
    client: Queryable | OrmTransaction,
    text: string,
    values: readonly (SqlValue | readonly SqlValue[])[],
    operation: string,
  ): Promise<readonly Readonly<Record<string, unknown>>[]> {
    const kind = handleKindOf(client);
    if (kind === undefined) {
      if (client === null || typeof (client as Queryable).query !== 'function')
        throw new InvalidOptionsError(
          `outbox.${operation}: pass the client or ORM transaction of an open transaction`,
        );
      return (await (client as Queryable).query(text, values as unknown[])).rows;
    }
    refuseOutsideTransaction(kind, client, operation);
    const [rows = []] = await runStatements(kind, (list) => kind.run(client, list), [
      inlineParameters(text, values),
    ]);
    return rows;
  }

  #row(event: OutboxEvent) {
    if (event === null || typeof event !== 'object')
      throw new InvalidOptionsError('outbox.add: an event object is required');
    const { topic, key = null, payload, headers = {}, contentType } = event;
    if (typeof topic !== 'string' || topic.length === 0) {
      throw new InvalidOptionsError('outbox.add: topic must be a non-empty string');
    }
    if (key !== null && typeof key !== 'string')
      throw new InvalidOptionsError('outbox.add: key must be a string or null');
    if (contentType !== undefined && (typeof contentType !== 'string' || contentType === '')) {
      throw new InvalidOptionsError('outbox.add: contentType must be a non-empty string');
    }
    const bytes = payload instanceof Uint8Array;
    let body: Buffer;
    if (bytes) {
      body = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
    } else {
      const json = payload === undefined ? undefined : JSON.stringify(payload);
      if (json === undefined)
        throw new InvalidOptionsError('outbox.add: payload must be a JSON value or bytes');
      body = Buffer.from(encoder.encode(json));
    }
    return {
      topic,
      key,
      payload: body,
      contentType: contentType ?? (bytes ? 'application/octet-stream' : 'application/json'),
      headers: JSON.stringify({ ...this.#traceContext?.(), ...checkHeaders(headers) }),
    };
  }
}

/**
 * The writer's connection when `client` speaks MySQL: an ORM's transaction on MySQL (its ORM's dialect, told as its
 * store tells it), or a driver connection. Undefined for PostgreSQL's (a pg client, an ORM object on PostgreSQL).
 */
function mysqlConnectionOf(client: unknown, operation: string): UserConnection | undefined {
  const orm = mysqlHandleKindOf(client);
  if (orm !== undefined) {
    refuseOutsideTransaction(orm, client, operation);
    return ormConnection(orm, client);
  }
  return handleKindOf(client) === undefined ? userConnectionOf(client, operation) : undefined;
}

/** An ORM object outside a transaction, on either database, before anything is written. */
function refuseOutsideTransaction<Handle>(
  kind: { readonly name: string; inTransaction(handle: Handle): boolean },
  handle: Handle,
  operation: string,
): void {
  // An event written outside a transaction would commit on its own, whatever became of the business writes.
  if (!kind.inTransaction(handle))
    throw new InvalidOptionsError(
      `outbox.${operation}: this ${kind.name} object is not inside a transaction; pass the transaction's (trx/tx/manager) object`,
    );
}

function checkHeaders(headers: unknown): Readonly<Record<string, string>> {
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) {
    throw new InvalidOptionsError('outbox.add: headers must be an object of strings');
  }
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string')
      throw new InvalidOptionsError(`outbox.add: header "${name}" must be a string`);
  }
  return headers as Readonly<Record<string, string>>;
}

/** The outbox in the `public` schema with default options: `outbox.add(client, event)`. */
export const outbox = new Outbox();
