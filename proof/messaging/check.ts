// The messaging checker: reads what committed (the producer's `produced` rows), what the broker holds (every copy
// of every message, in the broker's order), the effect ledger (one row per applied effect, no uniqueness), the
// outbox and the broker's leftovers, and the processes' counts, and counts violations of what the outbox, the
// relay and the inbox promise together (docs/messaging/*.md):
//
// - every committed event's effect is applied exactly once: none lost, none twice, none of a rolled-back event;
// - every committed event reaches the broker, none that rolled back does, each under one message id;
// - each key's events reach the broker in commit order (the order of their first copies), and are applied in it;
// - nothing is dead-lettered or parked (the broker never refuses a message here, so a dead letter is a loss), the
//   outbox is drained, and no relay or consumer process crashed.
import type { EffectRow, ProducedRow } from './ledger.js';
import type { BrokerEntry, ConsumerCounts, RelayCounts } from './types.js';

export interface MessagingCheckInput {
  /** Set when the run ended because nothing was applied for a while with committed events waiting. */
  readonly stuck:
    | { readonly committed: number; readonly planned: number; readonly stallMs: number }
    | undefined;
  readonly produced: readonly ProducedRow[];
  readonly effects: readonly EffectRow[];
  readonly log: readonly BrokerEntry[];
  readonly outbox: { readonly pending: number; readonly dead: number };
  readonly leftovers: { readonly unsettled: number; readonly deadLettered: number };
  readonly consumers: ConsumerCounts;
  readonly relays: RelayCounts;
  readonly crashes: ReadonlyArray<{ readonly name: string; readonly pid: number; readonly exit: string }>;
}

export interface MessagingCheck {
  readonly name: string;
  readonly description: string;
  count: number;
  readonly examples: unknown[];
}

export interface MessagingCheckResult {
  readonly checks: MessagingCheck[];
  readonly violations: number;
  readonly committed: number;
  readonly keys: number;
  readonly effects: number;
  /** Copies at the broker (with duplicates) and distinct events among them. */
  readonly brokerCopies: number;
  readonly brokerEvents: number;
  readonly notes: string[];
}

const EXAMPLES = 5;

function slot<K, V>(map: Map<K, V>, key: K, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}

export function checkMessaging(input: MessagingCheckInput): MessagingCheckResult {
  const checks = new Map<string, MessagingCheck>();
  const define = (name: string, description: string) =>
    checks.set(name, { name, description, count: 0, examples: [] });
  const fail = (name: string, example: unknown) => {
    const entry = checks.get(name)!;
    entry.count++;
    if (entry.examples.length < EXAMPLES) entry.examples.push(example);
  };
  define('lost', 'committed events whose effect was never applied');
  define('duplicate-effects', 'committed events whose effect was applied more than once');
  define('effect-not-committed', 'effects of events that never committed (rolled back, or unknown)');
  define('not-published', 'committed events of which the broker holds no copy');
  define('published-not-committed', 'messages at the broker of events that never committed');
  define('broker-order', 'keys whose events reached the broker out of commit order (first copies)');
  define('apply-order', "keys whose events' effects were applied out of commit order");
  define('message-ids', 'events published under more than one message id, or message ids naming two events');
  define('dead-letters', 'events dead-lettered by the relay, parked or refused by the inbox');
  define('outbox-not-drained', 'outbox rows still pending at the end');
  define('process-crashed', 'relay or consumer processes that exited without being killed');
  define('stuck', 'runs that stopped early: committed events waited and nothing was applied for a while');
  if (input.stuck !== undefined) fail('stuck', input.stuck);

  const committed = new Map(input.produced.map((row) => [row.uuid, row]));
  const byKey = new Map<string, ProducedRow[]>();
  for (const row of input.produced) slot(byKey, row.key, () => []).push(row);

  // Effects: exactly one per committed event, none of anything else.
  const effectsOf = new Map<string, EffectRow[]>();
  for (const effect of input.effects) {
    slot(effectsOf, effect.uuid, () => []).push(effect);
    if (!committed.has(effect.uuid)) fail('effect-not-committed', effect);
  }
  const copies = new Map<string, BrokerEntry[]>();
  const idsOf = new Map<string, Set<string>>();
  const eventsOfId = new Map<string, Set<string>>();
  for (const entry of input.log) {
    const uuid = entry.uuid ?? `(unreadable payload of ${entry.messageId})`;
    slot(copies, uuid, () => []).push(entry);
    if (!committed.has(uuid)) fail('published-not-committed', entry);
    slot(idsOf, uuid, () => new Set()).add(entry.messageId);
    slot(eventsOfId, entry.messageId, () => new Set()).add(uuid);
  }
  for (const row of input.produced) {
    const applied = effectsOf.get(row.uuid) ?? [];
    const atBroker = copies.get(row.uuid) ?? [];
    if (applied.length === 0) fail('lost', { ...row, brokerCopies: atBroker.length });
    if (applied.length > 1) fail('duplicate-effects', { ...row, effects: applied });
    if (atBroker.length === 0) fail('not-published', row);
    if ((idsOf.get(row.uuid)?.size ?? 0) > 1) fail('message-ids', { ...row, ids: [...idsOf.get(row.uuid)!] });
  }
  for (const [messageId, uuids] of eventsOfId)
    if (uuids.size > 1) fail('message-ids', { messageId, events: [...uuids] });

  // Order per key: versions are commit order; the first copy at the broker and the first effect must follow it.
  const firstCopy = new Map<string, number>();
  for (const [uuid, list] of copies) firstCopy.set(uuid, Math.min(...list.map((entry) => entry.position)));
  const firstEffect = new Map<string, number>();
  for (const [uuid, list] of effectsOf) firstEffect.set(uuid, list[0]!.serial);
  for (const [key, rows] of byKey) {
    const inVersionOrder = [...rows].sort((a, b) => a.version - b.version);
    const ordered = (position: Map<string, number>) => {
      const seen = inVersionOrder.filter((row) => position.has(row.uuid));
      const byPosition = [...seen].sort((a, b) => position.get(a.uuid)! - position.get(b.uuid)!);
      return byPosition.every((row, index) => row === seen[index])
        ? undefined
        : { key, commitOrder: seen.map((r) => r.version), seen: byPosition.map((r) => r.version) };
    };
    const broker = ordered(firstCopy);
    if (broker !== undefined) fail('broker-order', broker);
    const applied = ordered(firstEffect);
    if (applied !== undefined) fail('apply-order', applied);
  }

  const dead =
    input.outbox.dead + input.leftovers.deadLettered + input.consumers.parked + input.consumers.invalid;
  if (dead > 0) {
    checks.get('dead-letters')!.count = dead;
    checks.get('dead-letters')!.examples.push({
      outboxDeadLetters: input.outbox.dead,
      brokerDeadLetterPath: input.leftovers.deadLettered,
      parked: input.consumers.parked,
      invalid: input.consumers.invalid,
    });
  }
  if (input.outbox.pending > 0) {
    checks.get('outbox-not-drained')!.count = input.outbox.pending;
    checks.get('outbox-not-drained')!.examples.push({ pending: input.outbox.pending });
  }
  for (const crash of input.crashes) fail('process-crashed', crash);

  const notes: string[] = [];
  // A consumer applies a key in order, so one lost event holds back the rest of its key: say how many.
  const lostKeys = new Set<string>();
  let behind = 0;
  for (const row of [...input.produced].sort((a, b) => a.version - b.version)) {
    if (effectsOf.has(row.uuid)) continue;
    if (lostKeys.has(row.key)) behind++;
    lostKeys.add(row.key);
  }
  if (lostKeys.size > 0)
    notes.push(
      `the ${checks.get('lost')!.count} events never applied are the first unapplied event of ${lostKeys.size} key(s) and ${behind} later events of those keys, held back behind it (a consumer applies a key in order)`,
    );
  if (input.leftovers.unsettled > 0)
    notes.push(
      `${input.leftovers.unsettled} message(s) still unacknowledged at the broker after the consumers stopped (their effects are checked above)`,
    );
  const list = [...checks.values()];
  return {
    checks: list,
    violations: list.reduce((sum, c) => sum + c.count, 0),
    committed: input.produced.length,
    keys: byKey.size,
    effects: input.effects.length,
    brokerCopies: input.log.length,
    brokerEvents: copies.size,
    notes,
  };
}
