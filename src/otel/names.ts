/**
 * @module Every span attribute and metric `oncely/otel` emits, in one place: docs/operations.md documents this table
 * and test/otel checks the emitted names against it. Names follow OpenTelemetry's conventions: `oncely.*` for our
 * own, the semantic conventions' `db.*`, `server.*`, `messaging.*` and `error.type` where they apply; durations in
 * seconds (`s`), counts in curly-brace units.
 */

/** The instrumentation scope (tracer and meter name). */
export const SCOPE = 'oncely';

export const ATTR = {
  /** What the key is scoped to: `POST /payments`, `fn:charge`, `inbox:ledger`. Never the client's key. */
  scope: 'oncely.scope',
  /** The storage key: a SHA-256 of scope and client key (base64url), never the raw key. Spans only. */
  keyHash: 'oncely.key.hash',
  /** How the execution ended: see `ExecutionOutcome`. */
  outcome: 'oncely.outcome',
  /** 1 for the first run of a key; higher after a release or a takeover. */
  attempt: 'oncely.attempt',
  fencingToken: 'oncely.fencing_token',
  takeover: 'oncely.takeover',
  releaseReason: 'oncely.release.reason',
  fencedOperation: 'oncely.fenced.operation',
  /** The engine's store operation: begin, complete, release, renew, get, commit, rollback. */
  storeOperation: 'oncely.store.operation',
  /** The store's own name (`memory`, `redis`, `postgres`): there even for stores that name no database. */
  storeName: 'oncely.store.name',
  inboxOutcome: 'oncely.inbox.outcome',
  outboxAttempt: 'oncely.outbox.attempt',
  /** On a publish span: the relay gave the row back unsent (shutdown, or its lease nearly over). */
  outboxUnsent: 'oncely.outbox.unsent',
  outboxTable: 'oncely.outbox.table',
  /** On the outbox gauges of `observeOutbox(db, { topics })`: the topics counted, sorted, comma-separated. */
  outboxTopics: 'oncely.outbox.topics',
} as const;

/** Semantic-convention attributes (stable database and messaging conventions). */
export const SEMCONV = {
  dbSystem: 'db.system.name',
  dbOperation: 'db.operation.name',
  dbNamespace: 'db.namespace',
  dbCollection: 'db.collection.name',
  dbStoredProcedure: 'db.stored_procedure.name',
  dbQuerySummary: 'db.query.summary',
  dbStatusCode: 'db.response.status_code',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  errorType: 'error.type',
  messagingSystem: 'messaging.system',
  messagingOperationName: 'messaging.operation.name',
  messagingOperationType: 'messaging.operation.type',
  messagingDestination: 'messaging.destination.name',
  messagingMessageId: 'messaging.message.id',
  messagingConsumerGroup: 'messaging.consumer.group.name',
} as const;

/**
 * How an execution ended. `acquired` / `takeover`: the key was claimed (a takeover after an owner's lease ran
 * out) and its outcome stored; `released`: claimed, then let go; `fenced`: another owner holds the key now;
 * `lease_lost`: the claim's lease ran out under the running code; `store_error`: the store failed or timed out.
 */
export type ExecutionOutcome =
  | 'acquired'
  | 'takeover'
  | 'replayed'
  | 'conflict'
  | 'mismatch'
  | 'fenced'
  | 'lease_lost'
  | 'released'
  | 'store_error';

export interface MetricDefinition {
  readonly name: string;
  readonly unit: string;
  readonly description: string;
  /** Histogram bucket boundaries, in the metric's unit. */
  readonly buckets?: readonly number[];
}

// Store calls take from a fraction of a millisecond (Redis on the same host) to the store timeout (2 s default).
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
// Claims last as long as the code they protect: milliseconds to the lease (30 s default) and beyond.
const CLAIM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
// An outbox event waits for a relay poll (up to 1 s idle), retries back off up to minutes.
const LAG_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

export const METRIC = {
  requests: {
    name: 'oncely.requests',
    unit: '{request}',
    description: 'Executions of the engine (begin calls) by how they ended (oncely.outcome) and scope.',
  },
  storeDuration: {
    name: 'oncely.store.duration',
    unit: 's',
    description:
      'Duration of store calls, bounded by the store timeout; error.type is set when a call failed.',
    buckets: STORE_BUCKETS,
  },
  claimDuration: {
    name: 'oncely.claim.duration',
    unit: 's',
    description: 'How long an owner held its claim: from the begin that acquired the key to its settlement.',
    buckets: CLAIM_BUCKETS,
  },
  replayDuration: {
    name: 'oncely.replay.duration',
    unit: 's',
    description:
      'Replay latency: from begin to the stored outcome in hand (waiting for a duplicate included).',
    buckets: STORE_BUCKETS,
  },
  inboxMessages: {
    name: 'oncely.inbox.messages',
    unit: '{message}',
    description: 'Deliveries handled by an inbox, by oncely.inbox.outcome (processed, duplicate, parked, …).',
  },
  inboxDuration: {
    name: 'oncely.inbox.duration',
    unit: 's',
    description: 'Time to handle one delivery, from the inbox taking it to its outcome.',
    buckets: CLAIM_BUCKETS,
  },
  outboxPublished: {
    name: 'oncely.outbox.published',
    unit: '{message}',
    description: 'Messages the broker confirmed.',
  },
  outboxFailed: {
    name: 'oncely.outbox.publish.failures',
    unit: '{message}',
    description: 'Publish attempts the broker refused or did not confirm in time (retried later).',
  },
  outboxDeadLettered: {
    name: 'oncely.outbox.dead_lettered',
    unit: '{message}',
    description: 'Messages that became dead letters after their last attempt.',
  },
  outboxPublishDuration: {
    name: 'oncely.outbox.publish.duration',
    unit: 's',
    description: 'Duration of one publish attempt, until the broker confirmed it or it failed.',
    buckets: STORE_BUCKETS,
  },
  outboxLag: {
    name: 'oncely.outbox.lag',
    unit: 's',
    description: 'Commit-to-publish latency: from the event row written to the broker confirming it.',
    buckets: LAG_BUCKETS,
  },
  outboxPending: {
    name: 'oncely.outbox.pending',
    unit: '{message}',
    description: 'Backlog: outbox rows not published yet (waiting, in flight or backing off).',
  },
  outboxOldestPendingAge: {
    name: 'oncely.outbox.oldest_pending.age',
    unit: 's',
    description: 'Age of the oldest unpublished outbox row; 0 when there is none.',
  },
  outboxDeadLetters: {
    name: 'oncely.outbox.dead_letters',
    unit: '{message}',
    description: 'Dead letters kept in the outbox table (until replayed or discarded).',
  },
} as const satisfies Record<string, MetricDefinition>;
