import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { describe, it } from 'vitest';
import { Engine } from '../../src/core/engine.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { useDisposableRedis } from './support/disposable.js';

// An owner process frozen (SIGSTOP) past its lease: another caller takes over with a higher token; when the
// owner thaws, its AbortSignal fires and its complete is refused, so only the new owner's result is stored.
const redis = useDisposableRedis();

const LEASE_MS = 600;
const worker = new URL('./workers/stalled-owner.ts', import.meta.url).pathname;

describe('an owner stalled past its lease', () => {
  it('is taken over with a higher token, its signal fires and its complete is refused', async () => {
    const prefix = `stall-${randomUUID().slice(0, 8)}`;
    const key = randomUUID();
    const owner = spawn(
      process.execPath,
      ['--import', 'tsx', worker, String(redis.server.port), prefix, key, String(LEASE_MS)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const lines = createInterface({ input: owner.stdout! })[Symbol.asyncIterator]();
    const running = (await lines.next()).value as string;
    const staleToken = Number(running.split(' ')[1]);
    owner.kill('SIGSTOP');
    try {
      // Frozen: no renewals. Once its lease has run out (by Redis TIME), another caller takes over.
      const engine = new Engine({ store: new RedisStore({ client: redis.client, prefix }), leaseMs: 10_000 });
      let takeover: { token: number; attempt: number; takeover: boolean } | undefined;
      for (let tries = 0; takeover === undefined; tries++) {
        assert.ok(tries < 100, 'the lease never ran out');
        await new Promise((resolve) => setTimeout(resolve, LEASE_MS / 2));
        try {
          await engine.execute({
            key,
            fingerprint: 'f',
            run: async (context) => {
              takeover = context;
              return 'new owner';
            },
            settle: (result) => ({
              keep: true,
              outcome: { status: 200, headers: [], body: Buffer.from(result) },
            }),
          });
        } catch {
          // InProgressError until the lease runs out
        }
      }
      assert.equal(takeover.takeover, true);
      assert.equal(takeover.attempt, 2);
      assert.ok(takeover.token > staleToken, 'the new claim out-ranks the stalled one');
    } finally {
      owner.kill('SIGCONT');
    }
    const report = JSON.parse((await lines.next()).value as string);
    assert.deepEqual(report, { token: staleToken, aborted: 'LeaseLostError', error: 'LeaseLostError' });
    const record = await new RedisStore({ client: redis.client, prefix }).begin({
      key,
      fingerprint: 'f',
      leaseMs: 1,
      retentionMs: 1,
    });
    assert.ok(record.kind === 'replay');
    assert.equal(
      Buffer.from(record.outcome.body).toString(),
      'new owner',
      "the stalled owner's result was never written",
    );
  });
});
