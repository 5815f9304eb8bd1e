// The faults of the messaging proof:
// - relay-kill: SIGKILL of a relay process mid-batch (aimed: the harness waits until the broker confirmed part of
//   its batch and the relay has not marked it), restarted `durationMs` later; its rows wait out their lease and
//   are published again by another relay (duplicates at the broker);
// - consumer-kill: SIGKILL of a consumer process mid-handler (aimed: while handlers have written their effect in
//   their transaction and not committed), restarted `durationMs` later; the broker redelivers what it had;
// - broker-fail: the broker's own failure (proof/messaging/brokers.ts: a restart, or every connection reset);
// - partition: the proxy forwards nothing either way for `durationMs`, holding the bytes, delivered late on heal.
import type { BrokerUnderTest } from './brokers.js';
import { sleep, type WorkerProcess } from './children.js';
import type { BrokerKind, ConsumerCounts, MessagingFault, RelayCounts } from './types.js';

export interface MessagingFaultPlan {
  /** Share of the planned events applied when the fault starts. */
  readonly at: number;
  readonly kind: 'relay-kill' | 'consumer-kill' | 'broker-fail' | 'partition';
  /** How long a killed process or the broker stays down, or the partition lasts. */
  readonly durationMs: number;
}

export interface FaultContext {
  readonly kind: BrokerKind;
  readonly broker: BrokerUnderTest;
  readonly relays: WorkerProcess<RelayCounts>[];
  readonly consumers: WorkerProcess<ConsumerCounts>[];
  /** Killed processes: their last counts still count. */
  readonly retired: WorkerProcess<RelayCounts | ConsumerCounts>[];
  respawnRelay(name: string): Promise<WorkerProcess<RelayCounts>>;
  respawnConsumer(name: string): Promise<WorkerProcess<ConsumerCounts>>;
}

const victims = new WeakMap<FaultContext, number>();

/**
 * Arms the worker and waits (at most `maxMs`) until it holds at the instant to kill it; the count it reported
 * (`field`), or, if it never got there, what its status says at the kill.
 */
async function aim(worker: WorkerProcess<unknown>, field: string, maxMs: number): Promise<number> {
  const caught = await worker.arm(maxMs);
  return caught[field] ?? (await worker.status())[field] ?? 0;
}

async function killAndRestart<P>(
  list: WorkerProcess<P>[],
  index: number,
  field: string,
  durationMs: number,
  context: FaultContext,
  respawn: (name: string) => Promise<WorkerProcess<P>>,
): Promise<{ victim: WorkerProcess<P>; caught: number; next: WorkerProcess<P>; startedAt: number }> {
  const victim = list[index]!;
  const caught = await aim(victim as WorkerProcess<unknown>, field, 10_000);
  const startedAt = Date.now();
  await victim.kill();
  context.retired.push(victim as WorkerProcess<RelayCounts | ConsumerCounts>);
  await sleep(durationMs);
  const next = await respawn(victim.name);
  list[index] = next;
  return { victim, caught, next, startedAt };
}

export async function injectFault(
  planned: MessagingFaultPlan,
  step: number,
  at: number,
  context: FaultContext,
): Promise<MessagingFault> {
  const startedAt = Date.now();
  const turn = victims.get(context) ?? 0;
  victims.set(context, turn + 1);
  const base = { step, at, startedAt };
  switch (planned.kind) {
    case 'relay-kill': {
      const index = turn % context.relays.length;
      const run = await killAndRestart(
        context.relays,
        index,
        'unmarked',
        planned.durationMs,
        context,
        context.respawnRelay,
      );
      return {
        ...base,
        startedAt: run.startedAt,
        kind: 'relay-kill',
        name: 'SIGKILL relay mid-batch',
        detail: `${run.victim.name} (pid ${run.victim.pid}) killed with ${run.caught} publish(es) confirmed by the broker and not marked, restarted ${planned.durationMs} ms later as pid ${run.next.pid}`,
        endedAt: Date.now(),
      };
    }
    case 'consumer-kill': {
      const index = turn % context.consumers.length;
      const run = await killAndRestart(
        context.consumers,
        index,
        'applying',
        planned.durationMs,
        context,
        context.respawnConsumer,
      );
      return {
        ...base,
        startedAt: run.startedAt,
        kind: 'consumer-kill',
        name: 'SIGKILL consumer mid-handler',
        detail: `${run.victim.name} (pid ${run.victim.pid}) killed with ${run.caught} handler(s) between their effect and its commit, restarted ${planned.durationMs} ms later as pid ${run.next.pid}`,
        endedAt: Date.now(),
      };
    }
    case 'broker-fail': {
      const detail = await context.broker.fail(planned.durationMs);
      return {
        ...base,
        kind: context.broker.failure,
        name:
          context.broker.failure === 'broker-restart'
            ? 'broker SIGKILL + restart'
            : 'broker connections reset',
        detail,
        endedAt: Date.now(),
      };
    }
    case 'partition': {
      context.broker.proxy.partition();
      await sleep(planned.durationMs);
      context.broker.proxy.heal();
      return {
        ...base,
        kind: 'partition',
        name: 'network partition',
        detail: `every relay↔broker and consumer↔broker connection silent for ${planned.durationMs} ms (bytes held, delivered late on heal)`,
        endedAt: Date.now(),
      };
    }
  }
}
