/**
 * oncely/trpc's `idempotent()` on tRPC 11, in-process through `createCaller`, on MemoryStore, the machine's Redis
 * and PostgreSQL: first run, replay without the resolver (structured values intact), concurrent duplicates,
 * mismatch, bad keys, a throwing resolver, queries left alone, keys from the input, scopes, and the errors' codes
 * and causes.
 */
import { randomUUID } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import { InProgressError } from 'oncely';
import { idempotencyErrorData } from 'oncely/trpc';
import { describe, expect, it } from 'vitest';
import { adapterStores } from '../graphql/stores.js';
import { caller, counters, router } from './app.js';

const stores = adapterStores('trpc');

async function refusal(call: Promise<unknown>): Promise<TRPCError> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(TRPCError);
  return error as TRPCError;
}

for (const setup of stores) {
  describe(`idempotent() on ${setup.name}`, () => {
    const fresh = (options: Parameters<typeof router>[2] = {}) => {
      const count = counters();
      const app = router(setup.create(), count, options);
      return { count, app, call: (headers: Record<string, string> = {}) => caller(app, headers) };
    };

    it('runs a mutation once and replays its result (a Date stays a Date) without the resolver', async () => {
      const { count, call } = fresh();
      const key = { 'idempotency-key': randomUUID() };
      const first = await call(key).pay({ cents: 500, note: 'lunch' });
      const second = await call(key).pay({ cents: 500, note: 'lunch' });
      expect(second).toEqual(first);
      expect(second.at).toBeInstanceOf(Date);
      expect(first.token).toBeGreaterThan(0);
      expect(count.runs.get('pay')).toBe(1);
      await call({ 'idempotency-key': randomUUID() }).pay({ cents: 500, note: 'lunch' });
      expect(count.runs.get('pay')).toBe(2);
    });

    it('takes the key from the input with key(input), no header needed; other input under it is refused', async () => {
      const { count, call } = fresh();
      const orderId = randomUUID();
      const first = await call().order({ orderId, cents: 1 });
      expect(await call().order({ orderId, cents: 1 })).toEqual(first);
      expect(count.runs.get('order')).toBe(1);
      const other = await refusal(call().order({ orderId, cents: 2 }));
      expect(other.code).toBe('UNPROCESSABLE_CONTENT');
    });

    it('answers a concurrent duplicate with CONFLICT (the retry-after in its cause), then replays', async () => {
      const { count, call } = fresh();
      let open!: () => void;
      count.gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      const key = { 'idempotency-key': randomUUID() };
      const first = call(key).slow({ cents: 7 });
      while (count.runs.get('slow') !== 1) await new Promise((resolve) => setTimeout(resolve, 5));
      const duplicate = await refusal(call(key).slow({ cents: 7 }));
      expect(duplicate.code).toBe('CONFLICT');
      expect(idempotencyErrorData(duplicate)).toEqual({
        code: 'IDEMPOTENCY_CONFLICT',
        retryAfter: expect.any(Number),
      });
      expect((duplicate.cause as { retryAfterMs?: number }).retryAfterMs).toBeGreaterThan(0);
      open();
      const answered = await first;
      expect(await call(key).slow({ cents: 7 })).toEqual(answered);
      expect(count.runs.get('slow')).toBe(1);
    });

    it('with waitMs, concurrent duplicates wait and get the first call’s result', async () => {
      const { count, call } = fresh({ waitMs: 5_000 });
      let open!: () => void;
      count.gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      const key = { 'idempotency-key': randomUUID() };
      const calls = [
        call(key).slow({ cents: 7 }),
        call(key).slow({ cents: 7 }),
        call(key).slow({ cents: 7 }),
      ];
      await new Promise((resolve) => setTimeout(resolve, 50));
      open();
      const results = await Promise.all(calls);
      for (const result of results) expect(result).toEqual(results[0]);
      expect(count.runs.get('slow')).toBe(1);
    });

    it('refuses the key with another input: UNPROCESSABLE_CONTENT, the resolver not run', async () => {
      const { count, call } = fresh();
      const key = { 'idempotency-key': randomUUID() };
      await call(key).pay({ cents: 500, note: 'a' });
      const other = await refusal(call(key).pay({ cents: 500, note: 'b' }));
      expect(other.code).toBe('UNPROCESSABLE_CONTENT');
      expect(idempotencyErrorData(other)).toEqual({ code: 'IDEMPOTENCY_MISMATCH' });
      expect(count.runs.get('pay')).toBe(1);
    });

    it('refuses a missing or malformed key with BAD_REQUEST; required: false runs without one', async () => {
      const { count, call } = fresh();
      const missing = await refusal(call().pay({ cents: 1 }));
      expect(missing.code).toBe('BAD_REQUEST');
      expect(idempotencyErrorData(missing)).toEqual({ code: 'IDEMPOTENCY_KEY_INVALID' });
      expect((await refusal(call({ 'idempotency-key': 'k'.repeat(256) }).pay({ cents: 1 }))).code).toBe(
        'BAD_REQUEST',
      );
      expect((await refusal(call({ 'idempotency-key': '"open' }).pay({ cents: 1 }))).code).toBe(
        'BAD_REQUEST',
      );
      expect((await refusal(call().order({ orderId: '', cents: 1 }))).code).toBe('BAD_REQUEST');
      expect(count.runs.get('pay')).toBeUndefined();

      const loose = fresh({ required: false });
      await loose.call().pay({ cents: 1 });
      await loose.call().pay({ cents: 1 });
      expect(loose.count.runs.get('pay')).toBe(2);
    });

    it('lets the key go when the resolver throws: its error as thrown, and a retry runs again', async () => {
      const { count, call } = fresh();
      count.failures = 1;
      const key = { 'idempotency-key': randomUUID() };
      const failed = await refusal(call(key).flaky({ cents: 9 }));
      expect(failed.code).toBe('INTERNAL_SERVER_ERROR');
      expect(failed.message).toBe('the card network is down');
      expect(idempotencyErrorData(failed)).toBeUndefined();
      const retried = await call(key).flaky({ cents: 9 });
      expect(await call(key).flaky({ cents: 9 })).toEqual(retried);
      expect(count.runs.get('flaky')).toBe(2);
    });

    it('leaves a resolver’s own oncely error as the resolver’s (INTERNAL_SERVER_ERROR, no idempotency data)', async () => {
      const { count, call } = fresh();
      count.failures = 1;
      count.failure = new InProgressError(1_000, 1);
      const failed = await refusal(call({ 'idempotency-key': randomUUID() }).flaky({ cents: 9 }));
      expect(failed.code).toBe('INTERNAL_SERVER_ERROR');
      expect(idempotencyErrorData(failed)).toBeUndefined();
    });

    it('answers a retry of a result past maxBodyBytes with IDEMPOTENCY_NOT_RETAINED, never running again', async () => {
      const { count, call } = fresh({ maxBodyBytes: 16 });
      const key = { 'idempotency-key': randomUUID() };
      await call(key).pay({ cents: 1 });
      const retry = await refusal(call(key).pay({ cents: 1 }));
      expect(idempotencyErrorData(retry)).toEqual({ code: 'IDEMPOTENCY_NOT_RETAINED' });
      expect(count.runs.get('pay')).toBe(1);
    });

    it('passes queries through, and leaves mutations without the middleware alone', async () => {
      const { count, call } = fresh();
      const key = { 'idempotency-key': randomUUID() };
      expect(await call(key).balance()).toEqual({ cents: 100, guarded: false });
      expect(await call(key).balance()).toEqual({ cents: 100, guarded: false });
      expect(await call().balance()).toEqual({ cents: 100, guarded: false });
      await call(key).plain({ cents: 1 });
      await call(key).plain({ cents: 1 });
      expect(count.runs.get('balance')).toBe(3);
      expect(count.runs.get('plain')).toBe(2);
    });

    it('scopes records by the caller: Authorization by default, or the scope option', async () => {
      const { count, call } = fresh();
      const key = randomUUID();
      await call({ 'idempotency-key': key, authorization: 'Bearer alice' }).pay({ cents: 1 });
      await call({ 'idempotency-key': key, authorization: 'Bearer bob' }).pay({ cents: 1 });
      await call({ 'idempotency-key': key, authorization: 'Bearer alice' }).pay({ cents: 1 });
      expect(count.runs.get('pay')).toBe(2);

      const tenant = fresh({ scope: (ctx) => ctx.headers.get('x-tenant') ?? '' });
      await tenant
        .call({ 'idempotency-key': key, authorization: 'Bearer alice', 'x-tenant': 't' })
        .pay({ cents: 1 });
      await tenant
        .call({ 'idempotency-key': key, authorization: 'Bearer bob', 'x-tenant': 't' })
        .pay({ cents: 1 });
      expect(tenant.count.runs.get('pay')).toBe(1);
    });
  });
}
