import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { Controller, Inject, Post } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { IdempotencyClaim, type IdempotencyContext, Idempotent } from '../../src/nestjs/index.js';
import { Counters, Gates } from '../http/support/routes.js';
import { redisStore } from '../support/stores.js';
import { createNestApp, FIXTURE } from './apps/nest.js';

const KEYS = 10;
const PER_KEY = 40;
const RUN_MS = 30;

@Controller()
class StormController {
  constructor(@Inject(FIXTURE) private readonly fixture: { counters: Counters }) {}

  // Duplicates wait for the first answer: every request gets it.
  @Post('wait')
  @Idempotent({ waitMs: 10_000 })
  async wait(@IdempotencyClaim() claim: IdempotencyContext) {
    return this.#run('wait', claim);
  }

  // Duplicates in flight get 409; the rest replay.
  @Post('conflict')
  @Idempotent()
  async conflict(@IdempotencyClaim() claim: IdempotencyContext) {
    return this.#run('conflict', claim);
  }

  async #run(route: string, claim: IdempotencyContext) {
    const n = this.fixture.counters.bump(route, claim.key);
    await new Promise((resolve) => setTimeout(resolve, RUN_MS));
    return { id: randomUUID(), n };
  }
}

const redis = redisStore('nestjs-storm');

/**
 * One execution per key on Nest: two applications on one Redis (two servers of one service), 400 concurrent identical requests
 * (40 for each of 10 keys, alternating between the two) over real sockets. Every key runs once; every 2xx of a key
 * carries the same bytes; a retry afterwards replays them.
 */
describe.each(['express', 'fastify'] as const)('storm on Nest (%s), two apps on one Redis', (platform) => {
  it.each(['wait', 'conflict'] as const)('/%s: one execution per key, one body per key', async (route) => {
    const counters = new Counters();
    const servers = await Promise.all(
      [0, 1].map(async () => {
        const store = await redis.create();
        const fixture = { counters, gates: new Gates() };
        return createNestApp(platform, { store, logger: false }, fixture, [StormController]);
      }),
    );
    try {
      const run = randomUUID();
      const key = (index: number) => `storm-${run}-${index}`;
      const send = (index: number, server: number) =>
        fetch(`http://127.0.0.1:${servers[server]!.port}/${route}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': key(index) },
          body: '{"amount":1}',
        }).then(async (response) => ({
          index,
          status: response.status,
          body: await response.text(),
        }));
      const answers = await Promise.all(
        Array.from({ length: KEYS * PER_KEY }, (_, request) => send(request % KEYS, request % 2)),
      );
      for (let index = 0; index < KEYS; index++) {
        expect(counters.get(route, key(index)), `executions of ${key(index)}`).toBe(1);
        const mine = answers.filter((answer) => answer.index === index);
        const ok = mine.filter((answer) => answer.status === 201);
        expect(new Set(ok.map((answer) => answer.body)).size, 'distinct 2xx bodies').toBe(1);
        expect(ok.length, 'the first answer at least').toBeGreaterThanOrEqual(1);
        const others = mine.filter((answer) => answer.status !== 201).map((answer) => answer.status);
        // With waitMs every duplicate gets the first answer; without, one in flight gets 409.
        expect(others.filter((status) => route === 'wait' || status !== 409)).toEqual([]);
        const retry = await send(index, index % 2);
        expect(retry.status).toBe(201);
        expect(retry.body).toBe(ok[0]!.body);
      }
    } finally {
      for (const { app } of servers) await app.close();
    }
  });
});
