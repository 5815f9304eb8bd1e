import { randomBytes } from 'node:crypto';
import type { EventLog } from '../../../src/dashboard/index.js';
import { Engine, Inbox, type Store } from '../../../src/index.js';
import { scopedKey } from '../../../src/store.js';

/** What `seed` put in a store, for the tests to compare the page against. */
export interface Seeded {
  readonly counts: {
    readonly records: number;
    readonly inProgress: number;
    readonly leaseExpired: number;
    readonly completed: number;
    readonly released: number;
    readonly parked: number;
  };
  /** A string inside every stored body: it must never reach the page unless one key's body is asked for. */
  readonly bodyMarker: string;
  /** A completed key, as a client names it. */
  readonly completed: { readonly scope: string; readonly key: string; readonly hashed: string };
  /** The in-progress key whose lease ran out. */
  readonly stuck: string;
}

const SCOPE = 'POST /orders\n';
const LONG_MS = 600_000;
const RETENTION_MS = 3_600_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Known records through the library's own paths (the engine, the store, an inbox), each kind a known number of
 * times, with the engine's events written into `log`: completed (one of them after a takeover), in progress
 * (one with its lease run out), released, parked, and one fenced complete.
 */
export async function seed(store: Store, log: EventLog): Promise<Seeded> {
  const run = randomBytes(4).toString('hex');
  const bodyMarker = `SECRET-BODY-${run}`;
  const engine = new Engine({ store, onEvent: log.onEvent, leaseMs: 5_000 });
  const body = new TextEncoder().encode(JSON.stringify({ order: run, card: bodyMarker }));
  const complete = (key: string) =>
    engine.execute({
      key,
      fingerprint: 'fp',
      run: async () => 'done',
      settle: () => ({
        keep: true,
        outcome: { status: 201, headers: [['content-type', 'application/json']], body },
      }),
    });
  const key = (name: string) => scopedKey(SCOPE, `${run}-${name}`);
  const claim = (name: string, leaseMs: number) =>
    store.begin({ key: key(name), fingerprint: 'fp', leaseMs, retentionMs: RETENTION_MS });

  for (const n of [1, 2, 3]) await complete(key(`done-${n}`));
  for (const n of [1, 2]) await claim(`running-${n}`, LONG_MS);
  await claim('stuck', 1);
  await claim('taken-over', 1);
  for (const n of [1, 2]) {
    const begun = await claim(`released-${n}`, LONG_MS);
    if (begun.kind === 'acquired') await store.release({ key: key(`released-${n}`), token: begun.token });
  }
  await sleep(30);
  // The lease of 'taken-over' ran out: this run takes it over (a takeover event) and completes it.
  await complete(key('taken-over'));
  // A claim whose record is removed under it: its complete is fenced (a fenced event).
  const begun = await engine.begin({ key: key('fenced'), fingerprint: 'fp' });
  if (begun.kind === 'acquired') {
    await store.delete(key('fenced'));
    await begun.claim.complete({ status: 200, headers: [], body }).catch(() => {});
  }
  // A message whose handler keeps failing: its second delivery parks it.
  const inbox = new Inbox(
    async () => {
      throw new Error('handler failed');
    },
    { store, messageId: (m: { id: string }) => m.id, maxAttempts: 1, onEvent: log.onEvent, scope: run },
  );
  await inbox.handle({ id: 'poison' });
  const parked = await inbox.handle({ id: 'poison' });
  if (parked.kind !== 'parked') throw new Error(`seed: the inbox answered ${parked.kind}, not parked`);
  await log.flush();
  return {
    counts: { records: 10, inProgress: 3, leaseExpired: 1, completed: 5, released: 2, parked: 1 },
    bodyMarker,
    completed: { scope: SCOPE, key: `${run}-done-1`, hashed: key('done-1') },
    stuck: key('stuck'),
  };
}
