/**
 * @module The store's script calls batched per turn of the event loop: every call made until the loop reaches its
 * check phase (all the requests whose data arrived in one poll) goes out in one batch, one pipeline per node, so
 * a burst of requests costs the server one read per node instead of one per call. `pipeline: false` sends each
 * call as it is made.
 */
import type { RedisTransport, ScriptCall } from './transport.js';

interface Waiting {
  readonly call: ScriptCall;
  readonly resolve: (reply: unknown) => void;
  readonly reject: (error: unknown) => void;
}

// Taken when the module loads, so a test's fake timers (which replace the global) never hold the store's calls.
const nextTurn = globalThis.setImmediate;

export class ScriptBatcher {
  readonly #transport: RedisTransport;
  #waiting: Waiting[] = [];

  constructor(transport: RedisTransport) {
    this.#transport = transport;
  }

  run(call: ScriptCall): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.#waiting.push({ call, resolve, reject }) === 1) nextTurn(this.#flush);
    });
  }

  readonly #flush = (): void => {
    const batch = this.#waiting;
    this.#waiting = [];
    let replies: Promise<unknown>[];
    try {
      replies = this.#transport.scripts(batch.map((w) => w.call));
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
      return;
    }
    batch.forEach((waiting, i) => {
      replies[i]!.then(waiting.resolve, waiting.reject);
    });
  };
}
