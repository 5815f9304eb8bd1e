import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createClient, type FetchFunction, isKeyRejectedError } from '../../src/client/index.js';
import { idempotency } from '../../src/http/hono.js';
import { MemoryStore } from '../../src/index.js';

// The client with a caller-provided fetch: a Hono app answered in process (`app.request`), no socket. The app
// fingerprints the body's exact bytes (oncely's default), so whatever the client re-sends must be byte-identical.

function uploadApp() {
  let uploads = 0;
  const app = new Hono();
  app.post('/uploads', idempotency({ store: new MemoryStore(), scope: () => 'tests' }), async (c) => {
    uploads++;
    const form = await c.req.formData();
    return c.json({ upload: uploads, name: form.get('name') }, 201);
  });
  return { app, uploads: () => uploads };
}

/** Delivers each request to the app, and loses the first answer after the app produced it (the lost response). */
function losingFirstAnswer(app: Hono): FetchFunction {
  let lost = false;
  return async (input, init) => {
    const response = await app.request(String(input), init);
    if (!lost) {
      lost = true;
      await response.body?.cancel();
      throw new TypeError('fetch failed');
    }
    return response;
  };
}

describe('a caller-provided fetch (an in-process Hono app)', () => {
  it('a FormData body is sent as the same bytes on the retry: a replay, not 422 key-reused; one upload', async () => {
    const { app, uploads } = uploadApp();
    const client = createClient({ fetch: losingFirstAnswer(app), baseDelayMs: 1 });
    const form = new FormData();
    form.set('name', 'invoice.pdf');
    const result = await client.fetch('http://app.test/uploads', { method: 'POST', body: form });
    expect(result).toMatchObject({ attempts: 2, replayed: true });
    expect(await result.response.json()).toEqual({ upload: 1, name: 'invoice.pdf' });
    expect(uploads()).toBe(1);
  });

  it('a new operation under an old key is refused by the server: KeyRejectedError (reused), nothing runs', async () => {
    const { app, uploads } = uploadApp();
    const client = createClient({ fetch: (input, init) => app.request(input, init) });
    const form = (name: string) => {
      const data = new FormData();
      data.set('name', name);
      return data;
    };
    await client.fetch('http://app.test/uploads', { method: 'POST', body: form('a.pdf'), key: 'upload-1' });
    const error = await client
      .fetch('http://app.test/uploads', { method: 'POST', body: form('b.pdf'), key: 'upload-1' })
      .catch((caught: unknown) => caught);
    expect(isKeyRejectedError(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'reused', status: 422, key: 'upload-1' });
    expect(uploads()).toBe(1);
  });
});
