import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { idempotency } from '../../src/http/express.js';
import { MemoryStore } from '../../src/index.js';
import type { HeaderPairs } from '../../src/store.js';

// X-Powered-By is a framework's banner, not the handler's response: never stored (outcome-policy.ts, the rule
// every adapter shares; test/nestjs/powered-by.test.ts holds Nest to it), so a replay carries the framework's own
// banner where it is enabled and none where it is not, whoever set the first answer's.
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A store that records the headers of every outcome it stores. */
function recordingStore() {
  const store = new MemoryStore();
  const stored: HeaderPairs[] = [];
  const complete = store.complete.bind(store);
  store.complete = (input) => {
    stored.push(input.outcome.headers);
    return complete(input);
  };
  return { store, stored };
}

async function serve(banner: boolean) {
  const { store, stored } = recordingStore();
  const app = express();
  if (!banner) app.disable('x-powered-by');
  app.post('/pay', idempotency({ store, logger: false, scope: 'global' }), (_req, res) => {
    // A banner the app sets itself, late (as some frameworks and plugins do): still not the handler's response.
    if (!banner) res.setHeader('X-Powered-By', 'Handler/1');
    res.status(201).json({ ok: true });
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  const { port } = server.address() as AddressInfo;
  const send = () =>
    fetch(`http://127.0.0.1:${port}/pay`, { method: 'POST', headers: { 'idempotency-key': 'k' } });
  return { send, stored };
}

describe('oncely/express and X-Powered-By', () => {
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
});
