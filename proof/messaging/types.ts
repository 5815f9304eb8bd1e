// The shapes the messaging proof's processes exchange: the orchestrator (proof/messaging/harness.ts), the
// producer, relay and consumer processes (proof/messaging/*-worker.ts) and the checker (proof/messaging/check.ts).

export const BROKER_KINDS = ['nats', 'rabbitmq', 'redis-streams'] as const;
export type BrokerKind = (typeof BROKER_KINDS)[number];

/** How a relay or a consumer reaches the broker: always through the fault proxy in front of it. */
export type BrokerConnection =
  | {
      readonly kind: 'nats';
      readonly port: number;
      readonly stream: string;
      /** The durable pull consumer the consumers share. */
      readonly durable: string;
      readonly subject: string;
      readonly ackWaitMs: number;
    }
  | {
      readonly kind: 'rabbitmq';
      readonly url: string;
      /** A fanout exchange: the work queue the consumers read and the audit queue the checker reads. */
      readonly exchange: string;
      readonly queue: string;
    }
  | {
      readonly kind: 'redis-streams';
      readonly port: number;
      readonly stream: string;
      readonly group: string;
      readonly claimIdleMs: number;
    };

/** The topic the producer writes: the NATS subject, the RabbitMQ routing key, the Redis stream. */
export function topicOf(broker: BrokerConnection): string {
  if (broker.kind === 'nats') return broker.subject;
  if (broker.kind === 'rabbitmq') return 'proof';
  return broker.stream;
}

export interface Database {
  readonly url: string;
  /** The run's schema: outbox, inbox records, business tables and the effect ledger. */
  readonly schema: string;
  readonly applicationName: string;
}

export interface ProducerConfig {
  readonly db: Database;
  readonly topic: string;
  /** Ordering keys `k0`..`k<keys-1>`, picked at random: writers of one key collide. */
  readonly keys: number;
  /** Concurrent writing transactions (one connection each). */
  readonly connections: number;
  /** Events per transaction: 1..maxPerTransaction, each of a different key. */
  readonly maxPerTransaction: number;
  readonly rollbackRate: number;
}

export interface RelayConfig {
  readonly name: string;
  readonly db: Database;
  readonly broker: BrokerConnection;
  readonly leaseMs: number;
  readonly publishTimeoutMs: number;
  readonly batchSize: number;
}

export interface ConsumerConfig {
  readonly name: string;
  readonly db: Database;
  readonly broker: BrokerConnection;
  /** Messages handled at once (each holds a transaction, so a PostgreSQL connection). */
  readonly concurrency: number;
  readonly leaseMs: number;
  readonly maxAttempts: number;
  /** The handler works a random 0..workMs after writing its effect, before it returns. */
  readonly workMs: number;
}

/** The payload of every event: the producer's id for it, its key, and its version (its place in commit order). */
export interface EventPayload {
  readonly uuid: string;
  readonly key: string;
  readonly version: number;
}

/** A copy of a message as the broker holds it, in the broker's order (read back after the run). */
export interface BrokerEntry {
  /** Position in the broker's order (stream sequence, entry id order, audit queue arrival). */
  readonly position: number;
  readonly messageId: string;
  readonly uuid: string | null;
}

/** A fault of the messaging run, as its log records it (times in ms since the epoch). */
export interface MessagingFault {
  readonly step: number;
  readonly kind: 'relay-kill' | 'consumer-kill' | 'broker-restart' | 'connection-reset' | 'partition';
  readonly name: string;
  readonly detail: string;
  /** Progress (share of the planned events applied) that triggered it. */
  readonly at: number;
  readonly startedAt: number;
  endedAt: number;
}

/** What a consumer process counted (its last report before it exited or was killed). */
export interface ConsumerCounts {
  processed: number;
  duplicate: number;
  busy: number;
  failed: number;
  parked: number;
  invalid: number;
  /** Processed on a redelivery or after a takeover (attempt > 1). */
  retried: number;
  /** Handler runs that found the key's previous event not yet applied (they fail, the message comes back). */
  waits: number;
  errors: number;
  /** CPU time of the process so far (user + system). */
  cpuMs: number;
}

export interface RelayCounts {
  published: number;
  failed: number;
  fenced: number;
  returned: number;
  outages: number;
  deadLettered: number;
  /** NATS only: publishes the stream answered as duplicates (dropped by `Nats-Msg-Id`). */
  duplicates: number;
  errors: number;
  /** CPU time of the process so far (user + system). */
  cpuMs: number;
}
