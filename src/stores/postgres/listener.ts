/**
 * @module The PostgreSQL store's LISTEN side of `waitFor`: one listening connection shared by every waiter, woken by
 * the NOTIFY of complete, release and delete. Only a hint that shortens a wait; polling stays the guarantee.
 */
import type { Client, Notification, Pool, PoolClient } from 'pg';
import { checkout } from './checkout.js';
import { quoteIdentifier } from './sql.js';

// After a failed LISTEN connection, waiters poll for this long before one of them tries to listen again.
const RECONNECT_PAUSE_MS = 1_000;

type Listening = { readonly client: Client | PoolClient; readonly owned: boolean };

/**
 * One LISTEN connection per store, shared by every `waitFor`: notifications name the key that completed,
 * released or was deleted. A hint only — a lost notification (dropped connection, a transaction pooler in
 * between) only means the waiter's next poll notices the change instead.
 */
export class CompletionListener {
  readonly #source: { readonly pool: Pool } | { readonly client: Client };
  readonly #channel: string;
  readonly #waiters = new Map<string, Set<() => void>>();
  #listening: Promise<Listening | undefined> | undefined;
  #retryAt = 0;
  #closed = false;

  constructor(source: { readonly pool: Pool } | { readonly client: Client }, channel: string) {
    this.#source = source;
    this.#channel = channel;
  }

  /**
   * Resolves on the next notification for `key`, or never; `cancel` forgets the waiter. Starts listening on
   * first use; if that fails, the promise simply never resolves and the caller's poll decides.
   */
  next(key: string): { readonly notified: Promise<void>; cancel(): void } {
    let wake!: () => void;
    const notified = new Promise<void>((resolve) => {
      wake = resolve;
    });
    const waiters = this.#waiters.get(key) ?? new Set<() => void>();
    this.#waiters.set(key, waiters);
    waiters.add(wake);
    void this.#ensure();
    return {
      notified,
      cancel: () => {
        waiters.delete(wake);
        if (waiters.size === 0 && this.#waiters.get(key) === waiters) this.#waiters.delete(key);
      },
    };
  }

  /** Resolves once LISTEN is in place (or failed), so a check made afterwards cannot miss a notification. */
  ready(): Promise<unknown> {
    return this.#ensure();
  }

  async close(): Promise<void> {
    this.#closed = true;
    const listening = await this.#listening;
    this.#listening = undefined;
    if (listening !== undefined) await this.#stop(listening, false);
  }

  #ensure(): Promise<Listening | undefined> {
    if (this.#closed) return Promise.resolve(undefined);
    if (this.#listening === undefined && Date.now() >= this.#retryAt) this.#listening = this.#start();
    return this.#listening ?? Promise.resolve(undefined);
  }

  async #start(): Promise<Listening | undefined> {
    let listening: Listening | undefined;
    try {
      listening =
        'pool' in this.#source
          ? { client: await checkout(this.#source.pool, this.#onBroken), owned: true }
          : { client: this.#source.client, owned: false };
      listening.client.on('notification', this.#onNotification);
      if (!listening.owned) listening.client.on('error', this.#onBroken);
      await listening.client.query(`LISTEN ${quoteIdentifier(this.#channel)}`);
      if (this.#closed) {
        await this.#stop(listening, false);
        return undefined;
      }
      return listening;
    } catch {
      if (listening !== undefined) await this.#stop(listening, true);
      this.#listening = undefined;
      this.#retryAt = Date.now() + RECONNECT_PAUSE_MS;
      return undefined;
    }
  }

  async #stop({ client, owned }: Listening, broken: boolean): Promise<void> {
    client.off('notification', this.#onNotification);
    client.off('error', this.#onBroken);
    if (!broken) await client.query(`UNLISTEN ${quoteIdentifier(this.#channel)}`).catch(() => {});
    if (owned) (client as PoolClient).release(broken);
  }

  readonly #onNotification = (message: Notification): void => {
    if (message.channel !== this.#channel || message.payload === undefined) return;
    const waiters = this.#waiters.get(message.payload);
    if (waiters !== undefined) for (const wake of [...waiters]) wake();
  };

  // The connection died: drop it (the pool replaces it) and wake every waiter so each polls at once.
  readonly #onBroken = (): void => {
    const broken = this.#listening;
    this.#listening = undefined;
    this.#retryAt = Date.now() + RECONNECT_PAUSE_MS;
    void broken?.then((listening) => listening && this.#stop(listening, true));
    for (const waiters of this.#waiters.values()) for (const wake of [...waiters]) wake();
  };
}
