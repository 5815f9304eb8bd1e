// The sizes of a proof run. `full` is what `npm run proof` runs and docs/guarantees.md reports; `short` is the
// same harness small enough for `npm test` (test/proof/http.test.ts).
import type { FaultPlan, ProofSettings } from './harness.js';
import type { MessagingFaultPlan } from './messaging/faults.js';
import type { MessagingSettings } from './messaging/settings.js';
import { BROKER_KINDS } from './messaging/types.js';
import { STORE_KINDS } from './types.js';

export type Profile = Omit<ProofSettings, 'profile' | 'outDir' | 'keep' | 'log'>;

/**
 * Every fault, spread over the run; the process faults and the store restart twice. The stalls differ: two
 * last 2 s past the lease (the stalled server's clients time out and retry elsewhere, the key is taken over,
 * the owner resumes long after), one resumes the owner the moment a takeover holds one of its keys (its stale
 * complete must be refused while another claim is in progress).
 */
const FULL_FAULTS: FaultPlan[] = [
  { at: 0.08, kind: 'server-kill', durationMs: 1_000 },
  { at: 0.16, kind: 'server-stall', durationMs: 2_000 },
  { at: 0.25, kind: 'store-restart', durationMs: 1_500 },
  { at: 0.33, kind: 'script-flush' },
  { at: 0.41, kind: 'partition', durationMs: 4_000 },
  { at: 0.47, kind: 'server-stall', durationMs: 2_000, resumeOnTakeover: true },
  { at: 0.53, kind: 'latency', durationMs: 5_000, latencyMs: 1_100 },
  { at: 0.62, kind: 'server-kill', durationMs: 1_000 },
  { at: 0.7, kind: 'latency', durationMs: 5_000, latencyMs: 100 },
  { at: 0.79, kind: 'store-restart', durationMs: 1_500 },
  { at: 0.88, kind: 'server-stall', durationMs: 2_000 },
];

/**
 * Messaging, per broker: each process fault twice (relay SIGKILLed mid-batch, consumer SIGKILLed mid-handler),
 * the broker's own failure, and a partition between the broker and everyone.
 */
const MESSAGING_FAULTS: MessagingFaultPlan[] = [
  { at: 0.08, kind: 'relay-kill', durationMs: 1_000 },
  { at: 0.18, kind: 'consumer-kill', durationMs: 1_000 },
  { at: 0.3, kind: 'broker-fail', durationMs: 1_500 },
  { at: 0.45, kind: 'relay-kill', durationMs: 1_000 },
  { at: 0.57, kind: 'consumer-kill', durationMs: 1_000 },
  { at: 0.7, kind: 'partition', durationMs: 3_000 },
  { at: 0.82, kind: 'broker-fail', durationMs: 1_500 },
];

const FULL_MESSAGING: MessagingSettings = {
  brokers: BROKER_KINDS,
  // 102,000 committed events in all. 100,000 per broker would take about 15 minutes on the 2 cores (every event is
  // four database transactions: the producer's, the relay's claim and delete, the inbox's), beyond the 20 the
  // whole proof may take.
  events: 34_000,
  keys: 2_000,
  relays: 3,
  consumers: 3,
  producerConnections: 4,
  maxPerTransaction: 4,
  rollbackRate: 0.1,
  backlog: 3_000,
  relayLeaseMs: 4_000,
  publishTimeoutMs: 2_000,
  batchSize: 500,
  consumerConcurrency: 12,
  inboxLeaseMs: 5_000,
  maxAttempts: 1_000,
  workMs: 5,
  faults: MESSAGING_FAULTS,
  faultGapMs: 3_000,
  drainTimeoutMs: 60_000,
  stallMs: 30_000,
  parallel: false,
};

export const PROFILES: Record<'full' | 'short', Profile> = {
  full: {
    stores: STORE_KINDS,
    requests: 100_000,
    loads: {
      // The ORMs' phases (Kysely, Drizzle, Prisma) and MariaDB's (plain and transactional) with every fault, at a
      // fifth of pg's load each.
      'postgres-kysely': { requests: 20_000 },
      'postgres-drizzle': { requests: 20_000 },
      'postgres-prisma': { requests: 20_000 },
      mysql: { requests: 20_000 },
      'mysql-tx': { requests: 20_000 },
      // dynalite carries about 100–200 writes a second here: 4 clients × 4 operations in flight keep it below that
      // (at 32 each, nearly every call timed out from the start, outside any fault). The load runs on until the
      // last fault is lifted, so it sends about 4,000.
      dynamodb: { requests: 3_000, concurrency: 4 },
    },
    keys: 2_000,
    clients: 4,
    concurrency: 32,
    window: 12,
    leaseMs: 3_000,
    waitMs: 2_000,
    storeTimeoutMs: 2_000,
    handlerMs: 250,
    timeoutMs: 4_000,
    lostProbability: 0.01,
    maxOperationMs: 120_000,
    parallel: false,
    connections: { store: 10, ledger: 4 },
    faults: FULL_FAULTS,
    faultGapMs: 5_000,
    messaging: FULL_MESSAGING,
  },
  short: {
    // One ORM (Kysely) beside pg's transactional mode, so `npm test` runs the ORM mode under faults too.
    stores: ['redis', 'postgres-tx', 'postgres-kysely'],
    parallel: true,
    // Two PostgreSQL stores at once: 2 × 4 servers × (5 + 2) connections, beside the other test files'.
    connections: { store: 5, ledger: 2 },
    // Planned; the load runs on until the last fault is lifted, so each store still sends about 2,000 (1,800–2,600).
    requests: 1_400,
    keys: 100,
    clients: 2,
    concurrency: 8,
    window: 4,
    leaseMs: 1_000,
    waitMs: 500,
    storeTimeoutMs: 1_000,
    handlerMs: 100,
    timeoutMs: 2_500,
    lostProbability: 0.02,
    maxOperationMs: 20_000,
    faults: [
      { at: 0.1, kind: 'server-kill', durationMs: 300 },
      { at: 0.2, kind: 'server-stall', durationMs: 1_000, resumeOnTakeover: true },
      { at: 0.3, kind: 'store-restart', durationMs: 300 },
      { at: 0.4, kind: 'partition', durationMs: 1_000 },
      { at: 0.5, kind: 'latency', durationMs: 1_000, latencyMs: 600 },
    ],
    faultGapMs: 1_500,
    messaging: undefined,
  },
};

/** The messaging phase small enough for `npm test` (test/proof/messaging.test.ts): every fault once per broker. */
export const MESSAGING_SHORT: MessagingSettings = {
  ...FULL_MESSAGING,
  events: 500,
  keys: 50,
  relays: 2,
  consumers: 2,
  producerConnections: 2,
  backlog: 400,
  relayLeaseMs: 2_000,
  publishTimeoutMs: 1_000,
  consumerConcurrency: 6,
  faults: [
    { at: 0.1, kind: 'relay-kill', durationMs: 300 },
    { at: 0.25, kind: 'consumer-kill', durationMs: 300 },
    { at: 0.4, kind: 'broker-fail', durationMs: 500 },
    { at: 0.6, kind: 'partition', durationMs: 1_000 },
  ],
  faultGapMs: 500,
  drainTimeoutMs: 20_000,
  stallMs: 10_000,
  parallel: true,
};
