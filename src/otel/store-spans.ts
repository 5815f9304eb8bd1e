/**
 * @module How a store call looks in a trace: span names, kinds and attributes worked out once per engine from the
 * store's endpoint, after OpenTelemetry's database conventions where the store names its database, and the
 * `error.type` of a failed call.
 */
import { type Attributes, SpanKind } from '@opentelemetry/api';
import type { StoreOperation } from '../core/instrumentation.js';
import type { Store, StoreEndpoint } from '../core/store.js';
import { ATTR, SEMCONV } from './names.js';

/** How the store calls of one engine are named and described: worked out once per engine, per operation. */
export interface StoreShape {
  readonly kind: SpanKind;
  readonly system: string | undefined;
  span(operation: StoreOperation): { readonly name: string; readonly attributes: Attributes };
  /** Attributes of `oncely.store.duration` (few, for cardinality): the store, the system and the operation. */
  metric(operation: StoreOperation): Attributes;
}

// What each operation sends to PostgreSQL: one statement on the table (a CTE whose main verb is this), or the end
// of a transactional claim's transaction.
const SQL_VERB: Record<StoreOperation, string> = {
  begin: 'INSERT',
  complete: 'UPDATE',
  release: 'UPDATE',
  renew: 'UPDATE',
  get: 'SELECT',
  commit: 'COMMIT',
  rollback: 'ROLLBACK',
};

/**
 * Spans of a store that names its database follow OpenTelemetry's database conventions: kind CLIENT, named
 * `{db.operation.name} {target}`. Redis runs every operation as a Lua script sent with EVALSHA, so the script is the
 * target (`EVALSHA oncely_begin`, the script as `db.stored_procedure.name`); PostgreSQL runs one statement on the
 * table (`INSERT public.oncely_keys`), or ends the claim's transaction (`COMMIT`). A store without an endpoint (the
 * memory store) is in-process: INTERNAL spans named `memory begin`.
 */
export function storeShape(store: Store): StoreShape {
  const endpoint = store.endpoint;
  const common: Attributes = { [ATTR.storeName]: store.name, ...(endpoint ? connection(endpoint) : {}) };
  const metricCommon: Attributes = {
    [ATTR.storeName]: store.name,
    ...(endpoint ? { [SEMCONV.dbSystem]: endpoint.system } : {}),
  };
  // Made once per engine, so a store call allocates no attribute object of its own.
  const spans = new Map<StoreOperation, { name: string; attributes: Attributes }>();
  const metrics = new Map<StoreOperation, Attributes>();
  for (const operation of Object.keys(SQL_VERB) as StoreOperation[]) {
    const own = endpoint === undefined ? inProcess(store.name, operation) : database(endpoint, operation);
    const attributes = { ...common, ...own.attributes, [ATTR.storeOperation]: operation };
    spans.set(operation, { name: own.name, attributes });
    metrics.set(operation, { ...metricCommon, [ATTR.storeOperation]: operation });
  }
  return {
    kind: endpoint === undefined ? SpanKind.INTERNAL : SpanKind.CLIENT,
    system: endpoint?.system,
    span: (operation) => spans.get(operation)!,
    metric: (operation) => metrics.get(operation)!,
  };
}

function connection(endpoint: StoreEndpoint): Attributes {
  return {
    [SEMCONV.dbSystem]: endpoint.system,
    ...(endpoint.address === undefined ? {} : { [SEMCONV.serverAddress]: endpoint.address }),
    ...(endpoint.port === undefined ? {} : { [SEMCONV.serverPort]: endpoint.port }),
    ...(endpoint.namespace === undefined ? {} : { [SEMCONV.dbNamespace]: endpoint.namespace }),
  };
}

function inProcess(storeName: string, operation: StoreOperation) {
  return { name: `${storeName} ${operation}`, attributes: {} };
}

function database(endpoint: StoreEndpoint, operation: StoreOperation) {
  if (endpoint.system === 'redis') {
    const script = `oncely_${operation}`;
    return {
      name: `EVALSHA ${script}`,
      attributes: { [SEMCONV.dbOperation]: 'EVALSHA', [SEMCONV.dbStoredProcedure]: script },
    };
  }
  if (endpoint.system === 'postgresql') {
    const verb = SQL_VERB[operation];
    const onTable = verb !== 'COMMIT' && verb !== 'ROLLBACK' && endpoint.collection !== undefined;
    const name = onTable ? `${verb} ${endpoint.collection}` : verb;
    return {
      name,
      attributes: {
        [SEMCONV.dbOperation]: verb,
        [SEMCONV.dbQuerySummary]: name,
        ...(onTable ? { [SEMCONV.dbCollection]: endpoint.collection } : {}),
      },
    };
  }
  // Another database (a third-party store that names its endpoint): the engine's operation is all we know.
  const target = endpoint.collection ?? endpoint.namespace;
  return {
    name: target === undefined ? operation : `${operation} ${target}`,
    attributes: {
      [SEMCONV.dbOperation]: operation,
      ...(endpoint.collection === undefined ? {} : { [SEMCONV.dbCollection]: endpoint.collection }),
    },
  };
}

/**
 * `error.type` of a failed call (a short class, never a message) and the database's own code where it says one:
 * a PostgreSQL SQLSTATE, a Redis error prefix (`NOSCRIPT`, `READONLY`). The driver's error is the `cause`.
 */
export function errorAttributes(system: string | undefined, error: unknown): Attributes {
  const cause = (error as { cause?: unknown } | null)?.cause;
  const driver = cause instanceof Error ? cause : undefined;
  const code =
    (driver as { code?: unknown } | undefined)?.code ?? (driver === undefined ? codeOf(error) : undefined);
  let status: string | undefined;
  if (system === 'postgresql' && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) status = code;
  if (system === 'redis' && driver?.name === 'ReplyError') status = /^[A-Z]+/.exec(driver.message)?.[0];
  const type = typeof code === 'string' ? code : error instanceof Error ? error.name : 'Error';
  return {
    [SEMCONV.errorType]: type,
    ...(status === undefined ? {} : { [SEMCONV.dbStatusCode]: status }),
  };
}

/** A system error's `code` (`ECONNREFUSED`), not an `OncelyError`'s: those say the class, which `name` has. */
function codeOf(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && !code.startsWith('ONCELY_') ? code : undefined;
}
