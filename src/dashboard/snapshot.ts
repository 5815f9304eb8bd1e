/**
 * @module The page's data, built once for every viewer: one build in flight at a time and a fresh one reused for a
 * while, so many open tabs cost the stores what one does, and each panel read on its own, so one that fails shows
 * empty rather than stale.
 */
import { BUCKET_MS } from './events/entry.js';
import { readEvents } from './events/read.js';
import { readKeys } from './keys-panel.js';
import type { EventsPanel, PanelError, Snapshot } from './model.js';
import type { ResolvedDashboard } from './options.js';
import { BacklogHistory, readOutbox } from './outbox-panel.js';

/**
 * Builds the page's data for every viewer: one build in flight at a time, shared by whoever asks while it runs,
 * and a finished one reused until it is `refreshMs / 2` old, so ten open tabs cost the stores what one does. A
 * build slower than that (a large table, a slow store) is never joined by a second one: each would be a full
 * scan, and piling them up slows them all. Each panel is read on its own; one that fails (a table missing, a
 * store down) is reported in `errors` and shown empty, never with stale numbers.
 */
export class Snapshots {
  readonly #options: ResolvedDashboard;
  // Ten minutes of samples at the default refresh.
  readonly #history = new BacklogHistory(300);
  #building: Promise<Snapshot> | undefined;
  #latest: { done: number; snapshot: Snapshot } | undefined;

  constructor(options: ResolvedDashboard) {
    this.#options = options;
  }

  get(): Promise<Snapshot> {
    if (this.#building !== undefined) return this.#building;
    const latest = this.#latest;
    if (latest !== undefined && Date.now() - latest.done < this.#options.refreshMs / 2) {
      return Promise.resolve(latest.snapshot);
    }
    const building = this.#build()
      .then((snapshot) => {
        this.#latest = { done: Date.now(), snapshot };
        return snapshot;
      })
      .finally(() => {
        this.#building = undefined;
      });
    this.#building = building;
    return building;
  }

  async #build(): Promise<Snapshot> {
    const { source, outbox, listLimit, scanLimit, rateWindowMs } = this.#options;
    const errors: PanelError[] = [];
    const attempt = async <T>(panel: PanelError['panel'], read: () => Promise<T>): Promise<T | null> => {
      try {
        return await read();
      } catch (error) {
        errors.push({ panel, message: error instanceof Error ? error.message : String(error) });
        return null;
      }
    };
    const [keyPanels, events, outboxPanel] = await Promise.all([
      attempt('keys', () => readKeys(source, listLimit, scanLimit)),
      attempt('events', () => eventsOf(source.events, listLimit, rateWindowMs)),
      outbox === undefined
        ? null
        : attempt('outbox', async () => {
            const panel = await readOutbox(outbox, this.#history, listLimit);
            if (panel === null) {
              throw new Error(
                `there is no outbox table ${outbox.table}; oncely migrate creates it (or pass outbox: false)`,
              );
            }
            return panel;
          }),
    ]);
    return {
      at: Date.now(),
      store: { kind: source.kind, label: source.label },
      refreshMs: this.#options.refreshMs,
      actions: this.#options.actions,
      keys: keyPanels?.keys ?? null,
      events,
      outbox: outboxPanel,
      parked: keyPanels?.parked ?? null,
      errors,
    };
  }
}

/** A bare store has no event log: the panel then says how to add one, as when no application writes one. */
function eventsOf(
  source: ResolvedDashboard['source']['events'],
  listLimit: number,
  rateWindowMs: number,
): Promise<EventsPanel> {
  if (source === undefined)
    return Promise.resolve({ available: false, recent: [], bucketMs: BUCKET_MS, rates: [] });
  return readEvents(source, listLimit, rateWindowMs);
}
