/**
 * @module How the Redis store's `waitFor` learns that a key settled: one shared pub/sub subscriber with a channel
 * per waited-on key, and a re-check of the record, since pub/sub loses notices sent while the subscriber reconnects.
 */
import type { WaitForOptions } from '../../core/store.js';
import type { SettleSubscriber } from './transport.js';

export interface SettleWaiterOptions {
  /** The shared subscriber connection, created on first use; undefined when there is none (waiters poll). */
  readonly subscriber: () => SettleSubscriber | undefined;
  /** The channel that announces the key left the in-progress state. */
  readonly channel: (key: string) => string;
  /**
   * Whether the key is still in progress (one round trip on the store's own connection). It also registers the
   * waiter on the record, so the transition that ends the claim publishes its notice (watch-1.lua).
   */
  readonly pending: (key: string) => Promise<boolean>;
  /** How often a waiter re-checks the record in case a notice was lost. */
  readonly pollIntervalMs: number;
}

/**
 * `waitFor` over Redis pub/sub: every waiter of the store shares ONE subscriber connection, with one channel
 * subscription per key being waited on (dropped when its last waiter leaves). Pub/sub is at most once (a notice
 * sent while the subscriber reconnects is lost), so each waiter also re-checks the record after subscribing
 * (closing the race with a completion that happened just before) and then every `pollIntervalMs`. That check
 * marks the record as waited on: complete, release and delete publish only for such records, so a key nobody
 * waits on costs no PUBLISH. Subscribe, then mark: a transition that runs before the mark finds no mark but is
 * seen by the check itself; one that runs after it publishes to a subscription that is already there.
 */
export class SettleWaiter {
  readonly #options: SettleWaiterOptions;
  readonly #wakers = new Map<string, Set<(settled: boolean) => void>>();
  readonly #subscriptions = new Map<string, Promise<unknown>>();
  #connection: SettleSubscriber | undefined;
  /** True once the transport said it has no subscriber: every wait polls. */
  #pollOnly = false;
  #closed = false;

  constructor(options: SettleWaiterOptions) {
    this.#options = options;
  }

  /** Resolves true once the key is no longer in progress, false at the timeout or on abort. */
  wait(key: string, { timeoutMs, signal }: WaitForOptions): Promise<boolean> {
    if (this.#closed || signal?.aborted) return Promise.resolve(false);
    const channel = this.#options.channel(key);
    return new Promise<boolean>((resolve) => {
      let done = false;
      let pollTimer: NodeJS.Timeout | undefined;
      const finish = (settled: boolean) => {
        if (done) return;
        done = true;
        clearTimeout(deadline);
        clearTimeout(pollTimer);
        signal?.removeEventListener('abort', onAbort);
        this.#removeWaker(channel, finish);
        resolve(settled);
      };
      const onAbort = () => finish(false);
      const deadline = setTimeout(() => finish(false), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#addWaker(channel, finish);

      const poll = async () => {
        if (done) return;
        try {
          if (!(await this.#options.pending(key))) return finish(true);
        } catch {
          // The store is failing: keep waiting until the deadline; the caller's next begin reports the outage.
        }
        if (!done) pollTimer = setTimeout(poll, this.#options.pollIntervalMs);
      };
      // The first check waits for the subscription (so no completion can slip between check and subscribe),
      // but never longer than one polling interval, in case the subscriber connection is down.
      const subscribed = this.#subscribe(channel).catch(() => undefined);
      const patience = new Promise((r) => {
        pollTimer = setTimeout(r, this.#options.pollIntervalMs);
      });
      void Promise.race([subscribed, patience]).then(() => {
        clearTimeout(pollTimer);
        return poll();
      });
    });
  }

  /** Wakes every waiter with false, drops the subscriptions, and stops the subscriber (closing one the store made). */
  close(): void {
    this.#closed = true;
    for (const wakers of [...this.#wakers.values()]) for (const wake of [...wakers]) wake(false);
    this.#connection?.stop();
    this.#connection = undefined;
  }

  readonly #onMessage = (channel: string): void => {
    const wakers = this.#wakers.get(channel);
    if (wakers !== undefined) for (const wake of [...wakers]) wake(true);
  };

  #addWaker(channel: string, wake: (settled: boolean) => void): void {
    const wakers = this.#wakers.get(channel) ?? new Set();
    wakers.add(wake);
    this.#wakers.set(channel, wakers);
  }

  #removeWaker(channel: string, wake: (settled: boolean) => void): void {
    const wakers = this.#wakers.get(channel);
    if (wakers === undefined || !wakers.delete(wake) || wakers.size > 0) return;
    this.#wakers.delete(channel);
    if (!this.#subscriptions.delete(channel) || this.#connection === undefined) return;
    // Commands on one connection run in order, so a later SUBSCRIBE of the same channel still takes effect.
    this.#connection.unsubscribe(channel).catch(() => undefined);
  }

  #subscribe(channel: string): Promise<unknown> {
    if (this.#pollOnly) return Promise.resolve();
    let subscription = this.#subscriptions.get(channel);
    if (subscription === undefined) {
      if (this.#connection === undefined) {
        const connection = this.#options.subscriber();
        if (connection === undefined) {
          this.#pollOnly = true;
          return Promise.resolve();
        }
        connection.listen(this.#onMessage);
        this.#connection = connection;
      }
      subscription = this.#connection.subscribe(channel);
      this.#subscriptions.set(channel, subscription);
    }
    return subscription;
  }
}
