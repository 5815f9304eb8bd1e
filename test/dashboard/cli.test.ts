import { request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { expectCleanFailure, oncely, serveCli } from '../cli/support/cli.js';
import { createTestSchema, type TestSchema } from '../postgres/support.js';
import { requireService } from '../support/services.js';

// `oncely dashboard` as a user runs it (the built CLI): what it refuses before listening, and the guards it
// sets up when it listens.
const TOKEN = 'cli-test-token-0123456789abcdef';
const started: { stop: () => Promise<void> }[] = [];
// A schema of the test's own: the shared database's public schema holds whatever other tests and demos left there.
let db: TestSchema | undefined;

afterAll(async () => {
  await Promise.all(started.map((one) => one.stop()));
  await db?.drop();
});

/** Starts the CLI and resolves with the URL it prints (fragment included); stopped after the file. */
async function start(args: readonly string[], env: Record<string, string> = {}) {
  const serving = await serveCli(args, env);
  started.push(serving);
  return serving;
}

/** A GET with a Host header of our choosing (fetch does not allow setting it). */
function get(url: URL, path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: url.port, path, headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('error', reject);
    req.end();
  });
}

describe('oncely dashboard', () => {
  it('refuses to listen beyond loopback without a token', async () => {
    const result = await oncely(['dashboard', '--store', 'redis', '--host', '0.0.0.0', '--port', '0'], {
      ONCELY_DASHBOARD_TOKEN: undefined,
    });
    expectCleanFailure(result, 2, /beyond this machine.*ONCELY_DASHBOARD_TOKEN/);
    const short = await oncely(['dashboard', '--store', 'redis', '--host', '0.0.0.0'], {
      ONCELY_DASHBOARD_TOKEN: 'short',
    });
    expectCleanFailure(short, 2, /at least 16 characters/);
  });

  it('beyond loopback, with the token, every read needs it', async () => {
    await requireService('redis');
    const { url } = await start(['dashboard', '--store', 'redis', '--host', '0.0.0.0', '--port', '0'], {
      ONCELY_DASHBOARD_TOKEN: TOKEN,
    });
    expect(await get(url, '/api/snapshot')).toBe(401);
    expect(await get(url, '/api/snapshot', { 'x-oncely-token': TOKEN })).toBe(200);
  });

  it('on loopback answers only loopback host names (DNS rebinding), and --actions prints a link with a token', async () => {
    await requireService('postgres');
    db = await createTestSchema('dashboardcli', 2);
    const args = ['dashboard', '--store', 'postgres', '--schema', db.schema, '--port', '0', '--actions'];
    const { url } = await start(args, {
      ONCELY_DASHBOARD_TOKEN: '',
    });
    const token = /^#token=(.+)$/.exec(url.hash)?.[1];
    expect(token?.length).toBeGreaterThanOrEqual(16);
    expect(await get(url, '/api/snapshot', { host: `127.0.0.1:${url.port}` })).toBe(200);
    expect(await get(url, '/api/snapshot', { host: `localhost:${url.port}` })).toBe(200);
    expect(await get(url, '/api/snapshot', { host: `attacker.example:${url.port}` })).toBe(421);
    const unauthorised = await fetch(new URL('/api/actions/delete', url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'k'.repeat(43) }),
    });
    expect(unauthorised.status).toBe(401);
    const authorised = await fetch(new URL('/api/actions/delete', url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-oncely-token': token! },
      body: JSON.stringify({ key: 'k'.repeat(43) }),
    });
    expect(authorised.status).toBe(404); // no such record: the action ran
  });

  it('says what it needs: a store it can see from outside, flags of that store', async () => {
    expectCleanFailure(await oncely(['dashboard']), 2, /give --store redis or --store postgres/);
    expectCleanFailure(
      await oncely(['dashboard', '--store', 'redis', '--table', 't']),
      2,
      /--schema and --table go with/,
    );
    expectCleanFailure(
      await oncely(['demo', '--store', 'memory', '--dashboard']),
      2,
      /--dashboard runs on --store postgres/,
    );
    const help = await oncely(['help', 'dashboard']);
    expect(help.stdout).toContain('oncely dashboard --store redis|postgres');
  });
});
