import express from 'express';
import { afterEach, describe } from 'vitest';
import { idempotency } from '../../src/http/express.js';
import { closing, listening } from '../support/listen.js';
import { poweredByCases, recordingStore, sender } from './support/powered-by.js';

// X-Powered-By is a framework's banner, not the handler's response: never stored (outcome-policy.ts, the rule
// every adapter shares; test/nestjs/powered-by.test.ts holds Nest to it), so a replay carries the framework's own
// banner where it is enabled and none where it is not, whoever set the first answer's.
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

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
  closers.push(closing(server));
  return { send: sender(await listening(server)), stored };
}

describe('oncely/express and X-Powered-By', () => poweredByCases(serve));
