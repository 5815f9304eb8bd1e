import type { OutboxMessage, Publisher } from '../../../src/messaging/publisher.js';

/**
 * A Publisher (the relay's plug-in interface, not a broker stand-in) that records what it is given, so relay
 * logic (order, parking, backoff, shutdown) can be checked message by message. Broker behaviour is tested
 * against the real brokers in the other files.
 */
export class RecordingPublisher implements Publisher {
  readonly name = 'recording';
  readonly delivery = 'at-least-once' as const;
  readonly published: OutboxMessage[] = [];
  readonly attempts: OutboxMessage[] = [];
  readonly #inFlight = new Map<string, number>();
  maxInFlightPerKey = 0;
  /** Return an error to make that publish fail. */
  failWith: (message: OutboxMessage) => Error | undefined = () => undefined;
  /** How long each publish takes, ms. */
  delayFor: (message: OutboxMessage) => number = () => 0;

  async publish(message: OutboxMessage, signal: AbortSignal): Promise<void> {
    this.attempts.push(message);
    const key = message.key ?? `#${message.id}`;
    const inFlight = (this.#inFlight.get(key) ?? 0) + 1;
    this.#inFlight.set(key, inFlight);
    this.maxInFlightPerKey = Math.max(this.maxInFlightPerKey, inFlight);
    try {
      const delay = this.delayFor(message);
      if (delay > 0) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, delay);
          signal.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(signal.reason);
          });
        });
      }
      const error = this.failWith(message);
      if (error) throw error;
      this.published.push(message);
    } finally {
      this.#inFlight.set(key, (this.#inFlight.get(key) ?? 1) - 1);
    }
  }

  payloads(): unknown[] {
    return this.published.map((m) => JSON.parse(Buffer.from(m.payload).toString('utf8')));
  }
}
