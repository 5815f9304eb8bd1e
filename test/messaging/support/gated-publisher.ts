import type { OutboxMessage, Publisher } from '../../../src/messaging/publisher.js';

/** One publish waiting for the test to decide it. */
export interface PendingPublish {
  readonly message: OutboxMessage;
  /** The broker confirms it: `publish` resolves. */
  confirm(): void;
  /** The broker refuses it: `publish` rejects with `error`. */
  refuse(error: Error): void;
}

/**
 * A Publisher (the relay's plug-in interface, not a broker stand-in) whose every publish waits until the test
 * confirms or refuses it, so a test can hold a relay exactly between its claim and its settle.
 */
export class GatedPublisher implements Publisher {
  readonly name = 'gated';
  readonly delivery = 'at-least-once' as const;
  readonly pending: PendingPublish[] = [];

  publish(message: OutboxMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ message, confirm: resolve, refuse: reject });
    });
  }
}
