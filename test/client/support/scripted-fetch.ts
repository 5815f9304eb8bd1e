import type { FetchFunction } from '../../../src/client/options.js';

/** What one attempt of a scripted fetch does. */
export type Step =
  | { readonly status: number; readonly headers?: Record<string, string>; readonly body?: string }
  /** fetch rejects, as undici does for a refused or reset connection. */
  | 'network-error'
  /** Never answers; aborts when its signal does, as a real fetch would. */
  | 'hang'
  /** Never answers and never looks at its signal: a caller's fetch that ignores aborts. */
  | 'hang-deaf';

export interface SentRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: Headers;
  readonly body: string;
  readonly signal: AbortSignal;
  /** The init as fetch received it. */
  readonly init: RequestInit;
  readonly at: number;
}

/** A fetch that plays `steps` in order (the last one repeats) and records what each attempt sent. */
export function scriptedFetch(steps: readonly Step[]): {
  fetch: FetchFunction;
  sent: SentRequest[];
  calls: () => number;
} {
  const sent: SentRequest[] = [];
  let calls = 0;
  const fetch: FetchFunction = async (input, init) => {
    calls++;
    const step = steps[Math.min(sent.length, steps.length - 1)];
    const signal = init.signal;
    if (!signal) throw new Error('the client must give every attempt a signal');
    const body = init.body == null ? '' : await new Response(init.body).text();
    sent.push({
      url: String(input),
      method: init.method ?? 'GET',
      headers: new Headers(init.headers),
      body,
      signal,
      init,
      at: performance.now(),
    });
    if (step === undefined) throw new Error('no steps');
    if (step === 'network-error') throw new TypeError('fetch failed', { cause: new Error('ECONNRESET') });
    if (step === 'hang-deaf') return new Promise<Response>(() => {});
    if (step === 'hang') {
      return new Promise<Response>((_resolve, reject) => {
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    }
    return new Response(step.body ?? null, { status: step.status, headers: step.headers ?? {} });
  };
  return { fetch, sent, calls: () => calls };
}

/** oncely's problem answers, as the server writes them. */
export function problem(type: string, status: number, headers: Record<string, string> = {}) {
  return {
    status,
    headers: { 'content-type': 'application/problem+json', ...headers },
    body: JSON.stringify({
      type: `https://github.com/oncely/oncely/blob/main/docs/errors.md#${type}`,
      title: type,
      status,
      detail: `the ${type} detail`,
    }),
  };
}
