/**
 * @module Responses `oncely/fetch` must not hold: a `ReadableStream` body that keeps coming past `maxBodyBytes` is
 * returned as it comes (pulled at the client's pace, memory bounded by the cap), a `text/event-stream` is never
 * read ahead. Neither is stored: the key stays claimed while the body streams (a duplicate gets 409) and is
 * released when it is read to its end or cancelled, so a retry runs the handler again.
 */
import { describe, expect, it } from 'vitest';
import { withIdempotency } from '../../src/http/fetch.js';
import { MemoryStore, type OncelyEvent } from '../../src/index.js';
import { defaultId, until } from '../http/support/fixture.js';

const CAP = 64 * 1024;
const CHUNK = 16 * 1024;
const TOTAL = 1024 * 1024;

/** The reasons the engine gave for each release, as `onEvent` hears them. */
function releases() {
  const reasons: string[] = [];
  const onEvent = (event: OncelyEvent) => {
    if (event.type === 'released') reasons.push(event.reason);
  };
  return { reasons, onEvent };
}

const post = (path: string, key: string) =>
  new Request(`http://localhost${path}`, { method: 'POST', headers: { 'idempotency-key': key }, body: '{}' });

describe('oncely/fetch: streamed responses', () => {
  it('a body past maxBodyBytes streams as it is pulled, unstored; a duplicate meanwhile is 409; its end releases the key', async () => {
    const store = new MemoryStore();
    let runs = 0;
    let produced = 0;
    const released = releases();
    const handler = withIdempotency(
      () => {
        runs++;
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (produced >= TOTAL * runs) return controller.close();
            produced += CHUNK;
            controller.enqueue(new Uint8Array(CHUNK).fill(120));
          },
        });
        return new Response(body, { headers: { 'content-type': 'application/octet-stream' } });
      },
      { store, maxBodyBytes: CAP, logger: false, onEvent: released.onEvent },
    );
    const response = await handler(post('/export', 'k1'));
    expect(response.status).toBe(200);
    // Answered once the cap and two chunks were read (and the source's one chunk of read-ahead queued), the rest
    // still to come: nothing holds the whole body.
    expect(produced).toBeLessThanOrEqual(CAP + 3 * CHUNK);
    const id = defaultId('POST', '/export', 'k1');
    expect((await store.get(id))?.state).toBe('inProgress');
    expect((await handler(post('/export', 'k1'))).status).toBe(409);
    const received = (await response.arrayBuffer()).byteLength;
    expect(received).toBe(TOTAL);
    await until(async () => (await store.get(id))?.state !== 'inProgress');
    expect((await store.get(id))?.state).not.toBe('completed');
    // Released as a response not kept (it went out whole), not as a failed one.
    expect(released.reasons).toEqual(['notKept']);
    const retry = await handler(post('/export', 'k1'));
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    await retry.body?.cancel();
    expect(runs).toBe(2);
  });

  it('an event stream is never read ahead: its first event arrives while the handler writes; a cancel releases the key', async () => {
    const store = new MemoryStore();
    let runs = 0;
    let cancelled = false;
    const released = releases();
    const handler = withIdempotency(
      () => {
        runs++;
        const encoder = new TextEncoder();
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(encoder.encode('data: first\n\n'));
            // And nothing more until the client goes away.
          },
          cancel() {
            cancelled = true;
          },
        });
        return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
      },
      { store, logger: false, onEvent: released.onEvent },
    );
    const response = await handler(post('/events', 'k2'));
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('data: first\n\n');
    expect((await handler(post('/events', 'k2'))).status).toBe(409);
    await reader.cancel();
    expect(cancelled).toBe(true);
    const id = defaultId('POST', '/events', 'k2');
    await until(async () => (await store.get(id))?.state !== 'inProgress');
    expect(released.reasons).toEqual(['notKept']);
    const retry = await handler(post('/events', 'k2'));
    expect(retry.status).toBe(200);
    await retry.body?.cancel();
    expect(runs).toBe(2);
  });
});
