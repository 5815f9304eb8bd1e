// The settings of a messaging run and what it reports per broker (proof/messaging/harness.ts runs it).
import type { MessagingCheckResult } from './check.js';
import type { MessagingFaultPlan } from './faults.js';
import type { BrokerKind, ConsumerCounts, MessagingFault, RelayCounts } from './types.js';

export interface MessagingSettings {
  readonly brokers: readonly BrokerKind[];
  /** Committed events per broker run (rolled-back ones come on top). */
  readonly events: number;
  readonly keys: number;
  readonly relays: number;
  readonly consumers: number;
  readonly producerConnections: number;
  readonly maxPerTransaction: number;
  readonly rollbackRate: number;
  /** Committed events the producer may be ahead of the effects applied. */
  readonly backlog: number;
  readonly relayLeaseMs: number;
  readonly publishTimeoutMs: number;
  readonly batchSize: number;
  readonly consumerConcurrency: number;
  readonly inboxLeaseMs: number;
  readonly maxAttempts: number;
  readonly workMs: number;
  readonly faults: readonly MessagingFaultPlan[];
  /** Least time between one fault's end and the next one's start. */
  readonly faultGapMs: number;
  /** After the last event committed and the last fault: how long the rest may take to arrive. */
  readonly drainTimeoutMs: number;
  /** Nothing applied for this long: the run is stuck; remaining faults are skipped and the checker decides. */
  readonly stallMs: number;
  /** Run the brokers at the same time instead of one after the other. */
  readonly parallel: boolean;
}

export interface BrokerReport {
  readonly kind: BrokerKind;
  readonly startedAt: number;
  readonly durationMs: number;
  readonly loadMs: number;
  readonly committed: number;
  readonly rolledBack: number;
  /** Committed events applied per second over the load. */
  readonly throughput: number;
  /** From the producer's write to the effect's commit. */
  readonly latencyMs: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly relays: RelayCounts;
  readonly consumers: ConsumerCounts;
  readonly processes: { readonly relays: number; readonly consumers: number };
  /** CPU time of the run's own processes (the broker's and the database's not included). */
  readonly cpuMs: { readonly producer: number; readonly relays: number; readonly consumers: number };
  readonly faults: MessagingFault[];
  readonly leftovers: { readonly unsettled: number; readonly deadLettered: number };
  readonly result: MessagingCheckResult;
  readonly schema: string;
}

export const RELAY_ZERO: RelayCounts = {
  published: 0,
  failed: 0,
  fenced: 0,
  returned: 0,
  outages: 0,
  deadLettered: 0,
  duplicates: 0,
  errors: 0,
  cpuMs: 0,
};
export const CONSUMER_ZERO: ConsumerCounts = {
  processed: 0,
  duplicate: 0,
  busy: 0,
  failed: 0,
  parked: 0,
  invalid: 0,
  retried: 0,
  waits: 0,
  errors: 0,
  cpuMs: 0,
};

/** Adds up the counts of several processes. */
export function sum<T extends object>(zero: T, parts: ReadonlyArray<T | undefined>): T {
  const total = { ...zero } as Record<string, number>;
  for (const part of parts)
    for (const [name, value] of Object.entries(part ?? {}))
      if (name in total && typeof value === 'number') total[name]! += value;
  return total as T;
}

export function percentile(sorted: readonly number[], share: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))]!;
}
