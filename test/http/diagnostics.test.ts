import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { idempotency } from '../../src/http/express.js';
import { DIAGNOSTICS_CHANNELS, MemoryStore } from '../../src/index.js';
import { closing, listening } from '../support/listen.js';
import { defaultId } from './support/fixture.js';

// The diagnostics channels seen through an HTTP adapter: the engine's messages carry the route as their scope, and
// the layer's own refusals (a missing or malformed key, a body too large) come with their code and status.
const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

function listen() {
  const seen: [string, Record<string, unknown>][] = [];
  for (const name of Object.values(DIAGNOSTICS_CHANNELS)) {
    const onMessage = (message: unknown) => seen.push([name, message as Record<string, unknown>]);
    subscribe(name, onMessage);
    closers.push(() => unsubscribe(name, onMessage));
  }
  return seen;
}

async function app(options: { localCache?: boolean } = {}) {
  const server = express();
  server.use(express.json());
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  server.post(
    '/orders/:id',
    idempotency({ store: new MemoryStore(), logger: false, ...options }),
    async (req, res) => {
      if (req.body?.hold === true) await held;
      res.status(201).json({ ok: true });
    },
  );
  const http = server.listen(0, '127.0.0.1');
  closers.push(closing(http));
  const port = await listening(http);
  const send = (key: string | undefined, body: unknown) =>
    fetch(`http://127.0.0.1:${port}/orders/7`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer t',
        ...(key === undefined ? {} : { 'idempotency-key': key }),
      },
      body: JSON.stringify(body),
    });
  return { send, release: () => release() };
}

describe('diagnostics channels over oncely/express', () => {
  it('report each answer with its route, the hashed key and, for refusals, the code and status', async () => {
    const seen = listen();
    const { send, release } = await app();
    const scope = 'POST /orders/:id';
    const id = defaultId('POST', '/orders/:id', 'k-1', 'Bearer t');
    expect((await send(undefined, {})).status).toBe(400);
    expect((await send('"unterminated', {})).status).toBe(400);
    const first = send('k-1', { hold: true });
    await expect.poll(() => seen.some(([name]) => name === 'oncely:acquired')).toBe(true);
    expect((await send('k-1', { hold: true })).status).toBe(409);
    release();
    expect((await first).status).toBe(201);
    expect((await send('k-1', { hold: true })).status).toBe(201);
    expect((await send('k-1', { other: true })).status).toBe(422);
    const token = seen.find(([name]) => name === 'oncely:acquired')?.[1].token;
    expect(seen).toEqual([
      [
        'oncely:rejected',
        { code: 'key-missing', status: 400, key: undefined, scope, retryAfterMs: undefined },
      ],
      [
        'oncely:rejected',
        { code: 'key-malformed', status: 400, key: undefined, scope, retryAfterMs: undefined },
      ],
      ['oncely:acquired', { key: id, scope, token, attempt: 1 }],
      [
        'oncely:rejected',
        { code: 'conflict', status: 409, key: id, scope, retryAfterMs: expect.any(Number) },
      ],
      ['oncely:completed', { key: id, scope, token }],
      ['oncely:replayed', { key: id, scope }],
      ['oncely:rejected', { code: 'mismatch', status: 422, key: id, scope, retryAfterMs: undefined }],
    ]);
    expect(JSON.stringify(seen)).not.toContain('k-1');
  });

  it('answers from the local cache are reported too: a replay, and a reused key', async () => {
    const { send } = await app({ localCache: true });
    expect((await send('k-2', {})).status).toBe(201);
    expect((await send('k-2', {})).status).toBe(201);
    const seen = listen();
    expect((await send('k-2', {})).status).toBe(201);
    expect((await send('k-2', { other: 1 })).status).toBe(422);
    const id = defaultId('POST', '/orders/:id', 'k-2', 'Bearer t');
    expect(seen).toEqual([
      ['oncely:replayed', { key: id, scope: 'POST /orders/:id' }],
      [
        'oncely:rejected',
        { code: 'mismatch', status: 422, key: id, scope: 'POST /orders/:id', retryAfterMs: undefined },
      ],
    ]);
  });
});
