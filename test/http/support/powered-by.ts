/**
 * @module The X-Powered-By cases every Express-based layer must pass (oncely/express, oncely/nestjs on Nest's
 * Express platform): the banner is the framework's, not the handler's response, so it is never stored, and a
 * replay carries the framework's own banner where it is enabled and none where it is not, whoever set the first
 * answer's. Each test file serves its own app; the cases and the recording store are here, once.
 */
import { expect, it } from 'vitest';
import { MemoryStore } from '../../../src/index.js';
import type { HeaderPairs } from '../../../src/store.js';

/** A store that records the headers of every outcome it stores. */
export function recordingStore(): { readonly store: MemoryStore; readonly stored: HeaderPairs[] } {
  const store = new MemoryStore();
  const stored: HeaderPairs[] = [];
  const complete = store.complete.bind(store);
  store.complete = (input) => {
    stored.push(input.outcome.headers);
    return complete(input);
  };
  return { store, stored };
}

/** An app under test: `POST /pay` with one key, and the headers of what its store stored. */
export interface PoweredByApp {
  readonly send: () => Promise<Response>;
  readonly stored: readonly HeaderPairs[];
}

/**
 * The two cases, against `serve(banner)`: an app with the framework's banner on, and one with it off whose handler
 * sets `X-Powered-By: Handler/1` itself, late (as some frameworks and plugins do).
 */
export function poweredByCases(serve: (banner: boolean) => Promise<PoweredByApp>): void {
  it("is not stored; a replay gets Express's own banner", async () => {
    const { send, stored } = await serve(true);
    const first = await send();
    const replay = await send();
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('x-powered-by')).toBe('Express');
    expect(replay.headers.get('x-powered-by')).toBe('Express');
    expect(stored).toHaveLength(1);
    expect(stored[0]!.map(([name]) => name)).not.toContain('x-powered-by');
  });

  it('set late by the app with the banner disabled: the first answer has it, the record and the replay do not', async () => {
    const { send, stored } = await serve(false);
    const first = await send();
    const replay = await send();
    expect(first.headers.get('x-powered-by')).toBe('Handler/1');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('x-powered-by')).toBeNull();
    expect(stored[0]!.map(([name]) => name)).not.toContain('x-powered-by');
  });
}

/** `POST /pay` with the key `k`, to the app on `port`. */
export function sender(port: number): () => Promise<Response> {
  return () => fetch(`http://127.0.0.1:${port}/pay`, { method: 'POST', headers: { 'idempotency-key': 'k' } });
}
