// The shapes the proof's processes exchange: the orchestrator (proof/harness.ts), the app servers
// (proof/server.ts), the clients (proof/client.ts) and the checker (proof/check.ts).

export const ADAPTERS = ['express', 'fastify', 'hono', 'node'] as const;
export type Adapter = (typeof ADAPTERS)[number];

/** Transactional mode through an ORM (proof/orm-stores.ts): the store on the ORM, the payment through its transaction. */
export const ORM_STORE_KINDS = ['postgres-kysely', 'postgres-drizzle', 'postgres-prisma'] as const;
export type OrmStoreKind = (typeof ORM_STORE_KINDS)[number];

/** The stores on MariaDB (`oncely/mysql`): plain, and transactional mode (proof/mysql.ts). */
export const MYSQL_STORE_KINDS = ['mysql', 'mysql-tx'] as const;
export type MySqlStoreKind = (typeof MYSQL_STORE_KINDS)[number];

export const STORE_KINDS = [
  'redis',
  'cluster',
  'sentinel',
  'postgres',
  'postgres-tx',
  ...ORM_STORE_KINDS,
  ...MYSQL_STORE_KINDS,
  'dynamodb',
] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

/** The stores on PostgreSQL: plain, transactional on pg, transactional on an ORM. */
export type PostgresStoreKind = 'postgres' | 'postgres-tx' | OrmStoreKind;

export function isPostgres(kind: StoreKind): kind is PostgresStoreKind {
  return kind === 'postgres' || kind === 'postgres-tx' || isOrm(kind);
}

export function isMySql(kind: StoreKind): kind is MySqlStoreKind {
  return (MYSQL_STORE_KINDS as readonly string[]).includes(kind);
}

/**
 * Whether the handler's effect is a payment row written through the claim's transaction (pg's, an ORM's or
 * MySQL's): it commits with the key or not at all, and the checker holds such a store to one committed effect per
 * key.
 */
export function isTransactional(kind: StoreKind): kind is 'postgres-tx' | OrmStoreKind | 'mysql-tx' {
  return kind === 'postgres-tx' || kind === 'mysql-tx' || isOrm(kind);
}

export function isOrm(kind: StoreKind): kind is OrmStoreKind {
  return (ORM_STORE_KINDS as readonly string[]).includes(kind);
}

/** Two routes per server: duplicates get 409 + Retry-After on one, wait for the first answer on the other. */
export const ROUTES = ['/pay', '/pay-wait'] as const;
export type Route = (typeof ROUTES)[number];

/** How an app server reaches the store (always through the fault proxy) and the ledger (directly). */
export type StoreConnection =
  | { readonly kind: 'redis'; readonly port: number }
  | {
      readonly kind: 'cluster';
      /** Startup nodes, as the app sees them (proxy ports). */
      readonly nodes: readonly number[];
      /** `host:port` the cluster announces → the proxy port in front of it (ioredis `natMap`). */
      readonly natMap: Readonly<Record<string, number>>;
    }
  | {
      readonly kind: 'sentinel';
      /** Sentinel itself, reached directly. */
      readonly sentinelPort: number;
      readonly name: string;
      /** `host:port` Sentinel announces → the proxy port in front of it (ioredis `natMap`). */
      readonly natMap: Readonly<Record<string, number>>;
      readonly durable: { readonly replicas: number; readonly timeoutMs: number };
    }
  | {
      readonly kind: PostgresStoreKind;
      readonly url: string;
      readonly schema: string;
      readonly applicationName: string;
    }
  | {
      readonly kind: MySqlStoreKind;
      /** `mysql://…` through the proxy. */
      readonly url: string;
      /** The store's table (its procedures beside it) and, in transactional mode, the payments table. */
      readonly table: string;
      readonly payments: string;
    }
  | {
      readonly kind: 'dynamodb';
      /** dynalite through the proxy. */
      readonly endpoint: string;
      readonly table: string;
    };

/** The connection of a MariaDB store (a guard on the connection itself, so the other branches narrow too). */
export function isMySqlConnection(
  connection: StoreConnection,
): connection is Extract<StoreConnection, { kind: MySqlStoreKind }> {
  return isMySql(connection.kind);
}

export interface ServerConfig {
  readonly name: string;
  readonly adapter: Adapter;
  readonly port: number;
  readonly store: StoreConnection;
  /** Key prefix of the Redis records (one per run). */
  readonly prefix: string;
  readonly ledger: { readonly url: string; readonly schema: string; readonly applicationName: string };
  readonly leaseMs: number;
  readonly waitMs: number;
  readonly storeTimeoutMs: number;
  /** The handler works for a random 0..handlerMs after recording its effect, before it answers. */
  readonly handlerMs: number;
  /** Pool sizes: the store's (pg mode, the ORMs and MySQL alike) and the ledger's (PostgreSQL). */
  readonly connections: { readonly store: number; readonly ledger: number };
}

export interface ClientConfig {
  readonly index: number;
  /** `load`: the workload; `final`: after the faults, one operation per key (a late retry of every key). */
  readonly mode: 'load' | 'final';
  /** Start of the run: timeline buckets count from here. */
  readonly epoch: number;
  readonly servers: ReadonlyArray<{ readonly name: string; readonly url: string }>;
  readonly keyPrefix: string;
  /** Keys the planned requests sweep (more when the load runs longer); `final`: keys 0..keys-1. */
  readonly keys: number;
  /** Requests this client is to send (the key position moves with them); it stops when the harness says. */
  readonly requests: number;
  readonly concurrency: number;
  /** Keys either side of the current position that an operation picks from: how much clients collide. */
  readonly window: number;
  readonly timeoutMs: number;
  /** Probability that the client drops a request's connection before the answer (a lost response). */
  readonly lostProbability: number;
  /** An operation gives up after this long without a final answer (counted, and a violation). */
  readonly maxOperationMs: number;
  readonly resultFile: string;
  readonly seed: number;
}

export type Outcome =
  | 'ok' // 2xx
  | 'conflict' // 409
  | 'unavailable' // 503
  | 'server-error' // 5xx other than 503
  | 'client-error' // other 4xx (a violation: the clients never reuse a key with another body)
  | 'timeout'
  | 'connection' // refused, reset: a killed or restarting server
  | 'lost'; // the client dropped the connection on purpose

export const OUTCOMES: readonly Outcome[] = [
  'ok',
  'conflict',
  'unavailable',
  'server-error',
  'client-error',
  'timeout',
  'connection',
  'lost',
];

/** One distinct 2xx body of a key, as the clients saw it. */
export interface SeenBody {
  readonly digest: string;
  readonly token: number | null;
  readonly pid: number | null;
  count: number;
  replayed: number;
  firstAt: number;
}

export interface KeyResult {
  readonly bodies: SeenBody[];
}

export interface NotableAnswer {
  readonly at: number;
  readonly key: string;
  readonly server: string;
  readonly status: number;
  readonly body: string;
}

export interface ClientResult {
  readonly index: number;
  readonly requests: number;
  readonly operations: number;
  readonly gaveUp: ReadonlyArray<{ readonly key: string; readonly attempts: number }>;
  readonly outcomes: Record<Outcome, number>;
  /** Requests per outcome, per 100 ms bucket since `epoch`. */
  readonly epoch: number;
  readonly timeline: Record<Outcome, number[]>;
  /** Latency of answered requests: count per millisecond up to 10 s, then one overflow bucket. */
  readonly latency: number[];
  /** 5xx other than 503, and 4xx: kept whole for the report. */
  readonly notable: NotableAnswer[];
  readonly keys: Record<string, KeyResult>;
  readonly startedAt: number;
  readonly endedAt: number;
}

/** A fault, as the run log records it (times in ms since the epoch). */
export interface FaultRecord {
  /** Index of the fault in the run's plan. */
  readonly step: number;
  readonly name: string;
  readonly kind:
    | 'server-kill'
    | 'server-stall'
    | 'store-restart'
    | 'script-flush'
    | 'backend-terminate'
    | 'failover'
    | 'partition'
    | 'latency';
  readonly detail: string;
  /** Progress (share of the requests sent) that triggered it. */
  readonly at: number;
  readonly startedAt: number;
  /** When the fault was lifted (healed, restarted, resumed). */
  endedAt: number;
  /** Processes killed by this fault (their in-flight claims may legitimately re-run on a plain store). */
  readonly killedPids: number[];
  /** Processes stopped by this fault. */
  readonly stalledPids: number[];
  /** Whether the store itself was unreachable or slow (a 503 is the expected answer). */
  readonly storeFault: boolean;
  recoveryMs?: number | null;
  failuresDuring?: number;
}
