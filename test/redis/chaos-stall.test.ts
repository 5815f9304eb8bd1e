/**
 * @module Owners frozen (SIGSTOP) past their lease, one on each client (ioredis, iovalkey, node-redis, GLIDE), all in
 * one process: another caller on the same client takes each key over with a higher token; when the owners thaw,
 * their AbortSignals fire and their completes are refused, so only the new owners' results are stored.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { describe, it } from 'vitest';
import { Engine } from '../../src/core/engine.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { CLIENTS, type ClientName, connectClient, type MadeClient } from './support/clients.js';
import { useDisposableRedis } from './support/disposable.js';

const redis = useDisposableRedis();

const LEASE_MS = 600;
const worker = new URL('./workers/stalled-owner.ts', import.meta.url).pathname;

/** Takes `key` over once the frozen owner's lease has run out (by Redis TIME), through a store on `client`. */
async function takeOver(store: RedisStore, key: string) {
  const engine = new Engine({ store, leaseMs: 10_000 });
  for (let tries = 0; ; tries++) {
    assert.ok(tries < 100, `${key}: the lease never ran out`);
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS / 2));
    let takeover: { token: number; attempt: number; takeover: boolean } | undefined;
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
    if (takeover !== undefined) return takeover;
  }
}

describe('owners stalled past their lease', () => {
  it(`on ${CLIENTS.join(', ')}: each is taken over with a higher token, its signal fires and its complete is refused`, async () => {
    const prefix = `stall-${randomUUID().slice(0, 8)}`;
    const key = randomUUID();
    const owners = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        worker,
        String(redis.server.port),
        prefix,
        key,
        String(LEASE_MS),
        CLIENTS.join(','),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const lines = createInterface({ input: owners.stdout! })[Symbol.asyncIterator]();
    const made = new Map<ClientName, MadeClient>();
    try {
      const staleTokens = new Map<string, number>();
      for (const _ of CLIENTS) {
        const [, name, token] = ((await lines.next()).value as string).split(' ');
        staleTokens.set(name!, Number(token));
      }
      assert.deepEqual([...staleTokens.keys()].sort(), [...CLIENTS].sort(), 'every owner runs');
      owners.kill('SIGSTOP');
      try {
        // Frozen: no renewals. Once their leases have run out, a caller on each client takes its key over.
        for (const name of CLIENTS) made.set(name, await connectClient(name, redis.server.port));
        const stores = new Map(
          CLIENTS.map((name) => [name, new RedisStore({ client: made.get(name)!.client, prefix })]),
        );
        const takeovers = await Promise.all(
          CLIENTS.map((name) => takeOver(stores.get(name)!, `${key}-${name}`)),
        );
        CLIENTS.forEach((name, i) => {
          const takeover = takeovers[i]!;
          assert.equal(takeover.takeover, true, `${name}: a takeover`);
          assert.equal(takeover.attempt, 2, `${name}: the second attempt`);
          assert.ok(
            takeover.token > staleTokens.get(name)!,
            `${name}: the new claim out-ranks the stalled one`,
          );
        });
      } finally {
        owners.kill('SIGCONT');
      }
      const reports = [];
      for (const _ of CLIENTS) reports.push(JSON.parse((await lines.next()).value as string));
      assert.deepEqual(
        reports.sort((a, b) => a.client.localeCompare(b.client)),
        [...CLIENTS].sort().map((client) => ({
          client,
          token: staleTokens.get(client),
          aborted: 'LeaseLostError',
          error: 'LeaseLostError',
        })),
        'every thawed owner saw its signal fire and its complete refused',
      );
      for (const name of CLIENTS) {
        const record = await new RedisStore({ client: made.get(name)!.client, prefix }).begin({
          key: `${key}-${name}`,
          fingerprint: 'f',
          leaseMs: 1,
          retentionMs: 1,
        });
        assert.ok(record.kind === 'replay', `${name}: ${record.kind}`);
        assert.equal(
          Buffer.from(record.outcome.body).toString(),
          'new owner',
          `${name}: the stalled owner's result was never written`,
        );
      }
    } finally {
      owners.kill();
      await Promise.all([...made.values()].map((m) => m.close()));
    }
  });
});
