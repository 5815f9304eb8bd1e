/**
 * @module The demo's storm: concurrent identical requests per key against the payments service, and what came back.
 */
export interface StormOptions {
  /** Base URL of the payments service. */
  readonly url: string;
  /** Distinct idempotency keys. */
  readonly keys: number;
  /** Concurrent identical requests per key. */
  readonly duplicates: number;
  /** Called after every final answer (for the progress bar). */
  readonly onAnswer?: () => void;
  /** The amount paid under the key at `index`. Default 1,000 + index. */
  readonly amountFor?: (index: number) => number;
}

/** What the clients of one key saw. */
export interface KeyOutcome {
  readonly key: string;
  /** Final answers that ran the handler (no `Idempotent-Replayed` header). */
  fresh: number;
  /** Final answers replayed from the store. */
  replayed: number;
  /** 409 answers along the way (each was retried after `Retry-After`). */
  conflicts: number;
  /** Final answers that were neither 2xx nor retried. */
  failures: number;
  /** Distinct 2xx bodies: 1 when every client got the byte-identical answer. */
  readonly bodies: Set<string>;
}

const MAX_ATTEMPTS = 30;

/**
 * Fires `keys × duplicates` POST /payments requests at once, like clients whose first try timed out and who all
 * retry with the same key. A client that gets 409 retries after `Retry-After`, capped at 1 s (at least 50 ms) so the demo stays short.
 */
export async function runStorm(options: StormOptions): Promise<KeyOutcome[]> {
  const runId = Date.now().toString(36);
  const outcomes = Array.from(
    { length: options.keys },
    (_, index): KeyOutcome => ({
      key: `demo-${runId}-${String(index + 1).padStart(3, '0')}`,
      fresh: 0,
      replayed: 0,
      conflicts: 0,
      failures: 0,
      bodies: new Set(),
    }),
  );
  const clients = outcomes.flatMap((outcome, index) =>
    Array.from({ length: options.duplicates }, () =>
      client(options, outcome, { amount: options.amountFor?.(index) ?? 1_000 + index, currency: 'EUR' }),
    ),
  );
  await Promise.all(clients);
  return outcomes;
}

async function client(options: StormOptions, outcome: KeyOutcome, payment: object): Promise<void> {
  const body = JSON.stringify(payment);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const response = await fetch(`${options.url}/payments`, {
      method: 'POST',
      // One API client, authenticated as a payments client is: its key names its own records (docs/http.md#scope).
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer demo-client',
        'idempotency-key': outcome.key,
      },
      body,
    });
    const text = await response.text();
    if (response.status === 409) {
      outcome.conflicts++;
      const retryAfterS = Number(response.headers.get('retry-after') ?? '1');
      await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, Math.max(50, retryAfterS * 1_000))));
      continue;
    }
    if (response.ok) {
      outcome.bodies.add(text);
      if (response.headers.get('idempotent-replayed') === 'true') outcome.replayed++;
      else outcome.fresh++;
    } else {
      outcome.failures++;
    }
    options.onAnswer?.();
    return;
  }
  outcome.failures++;
  options.onAnswer?.();
}
