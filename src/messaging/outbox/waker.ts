/**
 * @module How an idle relay waits: a poll sleep cut short by a NOTIFY for its table on one held LISTEN connection
 * (PostgreSQL), or a plain poll sleep (MySQL, which has no NOTIFY). The notice is only a hint; the polling is what
 * delivers.
 */
import type { Notification, Pool, PoolClient } from 'pg';
import { NOTIFY_CHANNEL } from './table.js';

const RELISTEN_DELAY_MS = 1_000;

/**
 * How an idle relay waits: a sleep that a NOTIFY for its table (or `wake()`) cuts short. The notification is
 * only a hint: it is lost behind transaction-mode poolers and while the listening connection is down, and the
 * relay's polling is what guarantees delivery. The listening connection is one client checked out of the
 * caller's pool and held until `stop()`; if it breaks, the waker keeps polling and listens again later.
 */
export class Waker {
  readonly #pool: Pool | undefined;
  readonly #table: string;
  readonly #listen: boolean;
  readonly #onError: (error: unknown) => void;
  #client: PoolClient | undefined;
  readonly #onNotification = (message: Notification) => {
    if (message.channel === NOTIFY_CHANNEL && message.payload === this.#table) this.wake();
  };
  readonly #onClientError = (error: Error) => this.#lost(error);
  #connecting: Promise<void> | undefined;
  #nextListenAt = 0;
  #hinted = false;
  #wakeUp: (() => void) | undefined;
  #stopped = false;

  /** `pool` undefined (a MySQL relay): nothing to listen on; the waker only sleeps and takes `wake()`. */
  constructor(pool: Pool | undefined, table: string, listen: boolean, onError: (error: unknown) => void) {
    this.#pool = pool;
    this.#table = table;
    this.#listen = listen && pool !== undefined;
    this.#onError = onError;
  }

  /** True while a LISTEN connection is up (for tests and stats). */
  get listening(): boolean {
    return this.#client !== undefined;
  }

  /** Starts listening (when enabled). A failure is reported and retried; it never stops the relay. */
  async start(): Promise<void> {
    await this.#ensureListening();
  }

  /**
   * Sleeps up to `ms`. Resolves true when woken by a hint (a NOTIFY, `wake()`, or one that arrived while the relay
   * was busy), false at the timeout.
   */
  async sleep(ms: number): Promise<boolean> {
    if (this.#stopped) return true;
    void this.#ensureListening();
    if (this.#hinted) {
      this.#hinted = false;
      return true;
    }
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.#wakeUp = undefined;
        resolve(false);
      }, ms);
      this.#wakeUp = () => {
        clearTimeout(timer);
        this.#wakeUp = undefined;
        this.#hinted = false;
        resolve(true);
      };
    });
  }

  /** Cuts the current sleep short (or the next one, if the relay is busy). */
  wake(): void {
    this.#hinted = true;
    this.#wakeUp?.();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.wake();
    await this.#connecting;
    const client = this.#client;
    this.#client = undefined;
    if (client === undefined) return;
    this.#detach(client);
    try {
      await client.query(`UNLISTEN ${NOTIFY_CHANNEL}`);
      client.release();
    } catch (error) {
      client.release(error instanceof Error ? error : true);
    }
  }

  #ensureListening(): Promise<void> {
    if (!this.#listen || this.#stopped || this.#client !== undefined || Date.now() < this.#nextListenAt) {
      return Promise.resolve();
    }
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #connect(): Promise<void> {
    let client: PoolClient | undefined;
    try {
      client = await this.#pool!.connect();
      client.on('notification', this.#onNotification);
      client.on('error', this.#onClientError);
      await client.query(`LISTEN ${NOTIFY_CHANNEL}`);
      if (this.#stopped) throw new Error('stopped');
      this.#client = client;
      // Rows may have been written while nobody listened: treat the (re)connection itself as a hint.
      this.wake();
    } catch (error) {
      this.#nextListenAt = Date.now() + RELISTEN_DELAY_MS;
      if (client !== undefined) {
        this.#detach(client);
        client.release(true);
      }
      if (!this.#stopped) this.#onError(error);
    }
  }

  #lost(error: unknown): void {
    const client = this.#client;
    if (client === undefined) return;
    this.#client = undefined;
    this.#nextListenAt = Date.now() + RELISTEN_DELAY_MS;
    this.#detach(client);
    client.release(true);
    this.#onError(error);
  }

  #detach(client: PoolClient): void {
    client.removeListener('notification', this.#onNotification);
    client.removeListener('error', this.#onClientError);
  }
}
