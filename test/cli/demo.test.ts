import { execFile, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { renderReport } from '../../src/cli/demo/report.js';
import { requireService } from '../support/services.js';
import { expectCleanFailure, oncely, serveDemo } from './support/cli.js';

const run = promisify(execFile);
const cli = new URL('../../dist/cli/main.js', import.meta.url).pathname;

describe('oncely demo', () => {
  it('storms the payments service over real HTTP and proves one execution per key', async () => {
    const { stdout } = await run(process.execPath, [
      cli,
      'demo',
      '--keys',
      '5',
      '--duplicates',
      '40',
      '--processing-ms',
      '30',
    ]);
    expect(stdout).toMatch(/OK: 5 keys, each executed exactly once/);
    const totals = stdout.split('\n').find((line) => /^\s*\d+\s+5\s+195\s/.test(line));
    expect(totals, `totals row with 5 executions and 195 replays in:\n${stdout}`).toBeDefined();
  });

  it('--serve answers curl-style requests: 201, then a byte-identical replay, 422 on another body, 400 without key', async () => {
    const child = spawn(process.execPath, [cli, 'demo', '--serve', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          const match = /on (http:\/\/[\d.]+:\d+)/.exec(chunk.toString());
          if (match?.[1]) resolve(match[1]);
        });
        child.once('exit', (code) => reject(new Error(`demo --serve exited with ${code}`)));
      });
      const post = (body: string, key?: string) =>
        fetch(`${url}/payments`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
          body,
        });
      const first = await post('{"amount": 1999, "currency": "EUR"}', 'order-42');
      const firstBody = await first.text();
      expect(first.status).toBe(201);
      expect(JSON.parse(firstBody)).toMatchObject({ amount: 1999, currency: 'EUR', status: 'succeeded' });
      const again = await post('{"amount": 1999, "currency": "EUR"}', 'order-42');
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await again.text()).toBe(firstBody);
      expect((await post('{"amount": 5, "currency": "EUR"}', 'order-42')).status).toBe(422);
      const missing = await post('{"amount": 5, "currency": "EUR"}');
      expect(missing.status).toBe(400);
      expect(missing.headers.get('content-type')).toMatch(/application\/problem\+json/);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('--serve: a refused body answers 400, 415 or 422 as problem+json, is not stored, and the corrected retry runs', async () => {
    const demo = await serveDemo();
    try {
      const post = (key: string, body: string, contentType?: string) =>
        fetch(`${demo.url}/payments`, {
          method: 'POST',
          headers: { 'idempotency-key': key, ...(contentType ? { 'content-type': contentType } : {}) },
          body,
        });
      const valid = '{"amount": 1999, "currency": "EUR"}';
      const refused = [
        { key: 'empty-body', body: '', contentType: 'application/json', status: 400, detail: /empty/ },
        {
          key: 'malformed',
          body: '{"amount": 19',
          contentType: 'application/json',
          status: 400,
          detail: /JSON/,
        },
        {
          key: 'not-declared',
          body: 'amount=1999',
          contentType: undefined,
          status: 415,
          detail: /Content-Type/,
        },
        { key: 'text-plain', body: valid, contentType: 'text/plain', status: 415, detail: /Content-Type/ },
        {
          key: 'not-a-payment',
          body: '{"amount": -5}',
          contentType: 'application/json',
          status: 422,
          detail: /amount/,
        },
        { key: 'an-array', body: '[]', contentType: 'application/json', status: 422, detail: /object/ },
      ];
      for (const bad of refused) {
        const answer = await post(bad.key, bad.body, bad.contentType);
        expect(answer.status, bad.key).toBe(bad.status);
        expect(answer.headers.get('content-type'), bad.key).toMatch(/^application\/problem\+json/);
        const problem = (await answer.json()) as { status: number; title: string; detail: string };
        expect(problem.status, bad.key).toBe(bad.status);
        expect(problem.title, bad.key).toBeTruthy();
        expect(problem.detail, bad.key).toMatch(bad.detail);
        // The same key with the corrected body charges: nothing was stored for the refused request.
        const corrected = await post(bad.key, valid, 'application/json');
        expect(corrected.status, `${bad.key} corrected`).toBe(201);
        expect(corrected.headers.get('idempotent-replayed'), `${bad.key} corrected`).toBeNull();
        // and from then on the key is the payment's
        const retried = await post(bad.key, valid, 'application/json');
        expect(retried.headers.get('idempotent-replayed'), `${bad.key} retried`).toBe('true');
      }
      expect(demo.stderr()).toBe('');
    } finally {
      await demo.stop();
    }
  });

  it('--serve on a busy port says so and exits 1, closing the store it opened', async () => {
    await requireService('postgres');
    const busy = await new Promise<Server>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => resolve(server));
    });
    const { port } = busy.address() as { port: number };
    try {
      // PostgreSQL too: a pool left open keeps the process alive until its idle connections time out (10 s),
      // so the run is killed (exit -1) after 6 s; closed properly it ends in well under a second.
      for (const store of ['memory', 'postgres']) {
        const result = await oncely(['demo', '--serve', '--port', String(port), '--store', store], {}, 6_000);
        expectCleanFailure(
          result,
          1,
          new RegExp(`demo: port ${port} on 127.0.0.1 is in use; .*pick another with --port`),
        );
        expect(result.stdout, store).toBe('');
      }
    } finally {
      busy.close();
    }
  });

  it('rejects bad flags with exit code 2 and a clear message', async () => {
    const failure = await run(process.execPath, [cli, 'demo', '--keys', '0']).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure).toMatchObject({ code: 2 });
    expect((failure as { stderr: string }).stderr).toMatch(/--keys must be a whole number/);
    expectCleanFailure(await oncely(['demo', '--serve', '--keys', '3']), 2, /--serve runs no storm/);
    expectCleanFailure(await oncely(['demo', '--port', '3000']), 2, /--port and --host go with --serve/);
  });

  it('the verdict fails when a key executed twice or clients saw different bodies', () => {
    const outcome = (key: string, bodies: string[]) => ({
      key,
      fresh: 1,
      replayed: 1,
      conflicts: 0,
      failures: 0,
      bodies: new Set(bodies),
    });
    const twice = renderReport([outcome('a', ['x'])], new Map([['a', 2]]), 1);
    expect(twice.exactlyOnce).toBe(false);
    expect(twice.text).toMatch(/FAILED/);
    const split = renderReport([outcome('a', ['x', 'y'])], new Map([['a', 1]]), 1);
    expect(split.exactlyOnce).toBe(false);
    expect(renderReport([outcome('a', ['x'])], new Map([['a', 1]]), 1).exactlyOnce).toBe(true);
  });
});
