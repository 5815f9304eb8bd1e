/**
 * oncely/graphql on graphql-yoga, in-process (`yoga.fetch`), on MemoryStore, the machine's Redis and PostgreSQL:
 * first run, replay without the resolver, one record per field of a document, concurrent duplicates, mismatch, bad
 * keys, a throwing resolver, queries and fields left alone, scopes, and the errors' shape (code, HTTP status,
 * retry-after).
 */
import { randomUUID } from 'node:crypto';
import { InProgressError } from 'oncely';
import { describe, expect, it, vi } from 'vitest';
import { app, counters, type GraphQLAnswer, post } from './app.js';
import { adapterStores } from './stores.js';

// One copy of graphql, as in an app: graphql-yoga, loaded by Node, gets graphql's CommonJS build, while Vite
// would give the sources it transforms (src/graphql) the ESM build, and yoga would take the plugin's GraphQLErrors
// for foreign errors and mask them. An app loads both through Node, so they share one copy there.
vi.mock('graphql', () => import('graphql/index.js'));

const stores = adapterStores('graphql');

const PAY = 'mutation { pay(cents: 500, note: "lunch") { id cents note label } }';

function errorOf(answer: GraphQLAnswer, index = 0) {
  const error = answer.body.errors?.[index];
  expect(error, JSON.stringify(answer.body)).toBeDefined();
  return error!;
}

for (const setup of stores) {
  describe(`useIdempotency on ${setup.name}`, () => {
    const fresh = (options: Parameters<typeof app>[2] = {}) => {
      const count = counters();
      const yoga = app(setup.create(), count, options);
      const send = (query: string, headers: Record<string, string> = {}) => post(yoga.fetch, query, headers);
      return { count, yoga, send };
    };

    it('runs a mutation once and replays its value to a retry, through the sub-fields, without the resolver', async () => {
      const { count, send } = fresh();
      const key = { 'idempotency-key': randomUUID() };
      const first = await send(PAY, key);
      const second = await send(PAY, key);
      expect(first.status).toBe(200);
      expect(first.body.errors).toBeUndefined();
      expect(second.body).toEqual(first.body);
      expect(count.runs.get('pay')).toBe(1);
      // The replayed value still goes through Payment.label, which read the stored id.
      expect((first.body.data!.pay as { label: string }).label).toMatch(/^pay_1:500$/);
      // Another key is another call.
      await send(PAY, { 'idempotency-key': randomUUID() });
      expect(count.runs.get('pay')).toBe(2);
    });

    it('takes the key from the idempotencyKey argument, left out of the fingerprint, before the header', async () => {
      const { count, send } = fresh();
      const argKey = randomUUID();
      const query = (note: string) =>
        `mutation { pay(cents: 1, note: "${note}", idempotencyKey: "${argKey}") { id note } }`;
      const first = await send(query('a'));
      const again = await send(query('a'), { 'idempotency-key': randomUUID() });
      expect(again.body).toEqual(first.body);
      expect(count.runs.get('pay')).toBe(1);
      expect(errorOf(await send(query('b'))).extensions?.code).toBe('IDEMPOTENCY_MISMATCH');
      // A key argument given as null is no key argument: the header's key, and the same fingerprint as without it.
      const header = { 'idempotency-key': randomUUID() };
      const withNull = await send('mutation { pay(cents: 3, idempotencyKey: null) { id } }', header);
      expect(await send('mutation { pay(cents: 3) { id } }', header)).toEqual(withNull);
      expect(count.runs.get('pay')).toBe(2);
      // An argument key and the same header key name two records.
      await send('mutation { pay(cents: 1, note: "a") { id } }', { 'idempotency-key': argKey });
      expect(count.runs.get('pay')).toBe(3);
    });

    it('gives each field of a document its own record under one header key (the response path)', async () => {
      const { count, send } = fresh();
      const key = { 'idempotency-key': randomUUID() };
      const doc =
        'mutation { a: pay(cents: 1) { id } b: pay(cents: 1) { id } c: payInput(input: { cents: 2 }) { id } }';
      const first = await send(doc, key);
      expect(first.body.errors).toBeUndefined();
      const ids = Object.values(first.body.data!).map((value) => (value as { id: string }).id);
      expect(new Set(ids).size).toBe(3);
      const second = await send(doc, key);
      expect(second.body).toEqual(first.body);
      expect(count.runs.get('pay')).toBe(2);
      expect(count.runs.get('payInput')).toBe(1);
    });

    it('answers a concurrent duplicate with IDEMPOTENCY_CONFLICT (409, retry-after) on that field alone', async () => {
      const { count, send } = fresh();
      let open!: () => void;
      count.gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      const key = { 'idempotency-key': randomUUID() };
      const doc = 'mutation { slow(cents: 7) { id } plain(cents: 3) }';
      const first = send(doc, key);
      while (count.runs.get('slow') !== 1) await new Promise((resolve) => setTimeout(resolve, 5));
      const duplicate = await send(doc, key);
      expect(duplicate.status).toBe(409);
      expect(duplicate.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      const error = errorOf(duplicate);
      expect(error.path).toEqual(['slow']);
      expect(error.extensions).toEqual({ code: 'IDEMPOTENCY_CONFLICT', retryAfter: expect.any(Number) });
      // The other field of the document ran: the error is the idempotent field's only.
      expect(duplicate.body.data?.plain).toBe(3);
      open();
      const answered = await first;
      expect(answered.body.errors).toBeUndefined();
      const retry = await send(doc, key);
      expect(retry.body.data?.slow).toEqual(answered.body.data?.slow);
      expect(count.runs.get('slow')).toBe(1);
    });

    it('with waitMs, a concurrent duplicate waits and gets the first call’s value', async () => {
      const { count, send } = fresh({ waitMs: 5_000 });
      let open!: () => void;
      count.gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      const key = { 'idempotency-key': randomUUID() };
      const doc = 'mutation { slow(cents: 7) { id } }';
      const calls = [send(doc, key), send(doc, key), send(doc, key)];
      await new Promise((resolve) => setTimeout(resolve, 50));
      open();
      const answers = await Promise.all(calls);
      for (const answer of answers) expect(answer.body).toEqual(answers[0]!.body);
      expect(answers[0]!.body.errors).toBeUndefined();
      expect(count.runs.get('slow')).toBe(1);
    });

    it('refuses the key with other arguments: IDEMPOTENCY_MISMATCH (422), the resolver not run', async () => {
      const { count, send } = fresh();
      const key = { 'idempotency-key': randomUUID() };
      await send(PAY, key);
      const other = await send('mutation { pay(cents: 501, note: "lunch") { id } }', key);
      expect(other.status).toBe(422);
      expect(errorOf(other).extensions).toEqual({ code: 'IDEMPOTENCY_MISMATCH' });
      // Input objects in another key order are the same arguments.
      await send('mutation { payInput(input: { cents: 2, note: "x" }) { id } }', key);
      const reordered = await send('mutation { payInput(input: { note: "x", cents: 2 }) { id } }', key);
      expect(reordered.body.errors).toBeUndefined();
      expect(count.runs.get('pay')).toBe(1);
      expect(count.runs.get('payInput')).toBe(1);
    });

    it('refuses a missing or malformed key with IDEMPOTENCY_KEY_INVALID (400); required: false runs without one', async () => {
      const { count, send } = fresh();
      const missing = await send(PAY);
      expect(missing.status).toBe(400);
      expect(errorOf(missing).extensions).toEqual({ code: 'IDEMPOTENCY_KEY_INVALID', reason: 'missing' });
      const long = await send(PAY, { 'idempotency-key': 'k'.repeat(256) });
      expect(errorOf(long).extensions).toEqual({ code: 'IDEMPOTENCY_KEY_INVALID', reason: 'too-long' });
      const quoted = await send(PAY, { 'idempotency-key': '"open' });
      expect(errorOf(quoted).extensions?.reason).toBe('bad-quoting');
      const arg = await send('mutation { pay(cents: 1, idempotencyKey: "") { id } }');
      expect(errorOf(arg).extensions).toEqual({ code: 'IDEMPOTENCY_KEY_INVALID', reason: 'empty' });
      expect(count.runs.get('pay')).toBeUndefined();

      const loose = fresh({ required: false });
      await loose.send(PAY);
      await loose.send(PAY);
      expect(loose.count.runs.get('pay')).toBe(2);
    });

    it('lets the key go when the resolver throws: its error as thrown, and a retry runs again', async () => {
      const { count, send } = fresh();
      count.failures = 1;
      const key = { 'idempotency-key': randomUUID() };
      const doc = 'mutation { flaky(cents: 9) { id } }';
      const failed = await send(doc, key);
      expect(failed.status).toBe(200);
      // Masked by yoga as any resolver error is: the plugin does not turn it into one of its own.
      expect(errorOf(failed).message).toBe('Unexpected error.');
      expect(errorOf(failed).extensions?.code).toBe('INTERNAL_SERVER_ERROR');
      const retried = await send(doc, key);
      expect(retried.body.errors).toBeUndefined();
      const replayed = await send(doc, key);
      expect(replayed.body).toEqual(retried.body);
      expect(count.runs.get('flaky')).toBe(2);
    });

    it('passes on a resolver’s own oncely error as the resolver’s error, not as a refusal of the key', async () => {
      const { count, send } = fresh();
      count.failures = 1;
      count.failure = new InProgressError(1_000, 1);
      const failed = await send('mutation { flaky(cents: 9) { id } }', { 'idempotency-key': randomUUID() });
      expect(failed.status).toBe(200);
      expect(errorOf(failed).extensions?.code).toBe('INTERNAL_SERVER_ERROR');
    });

    it('guards a field of a namespace type in mutations, and leaves it alone when a query reaches it', async () => {
      const { count, send } = fresh({ fields: ['PaymentOps.create'] });
      const key = { 'idempotency-key': randomUUID() };
      const doc = 'mutation { payments { a: create(cents: 1) { id } b: create(cents: 1) { id } } }';
      const first = await send(doc, key);
      expect(first.body.errors).toBeUndefined();
      expect(await send(doc, key)).toEqual(first);
      expect(count.runs.get('create')).toBe(2);
      for (let i = 0; i < 2; i++) {
        const read = await send('query { preview { create(cents: 1) { id } } }', key);
        expect(read.body.errors).toBeUndefined();
      }
      expect(count.runs.get('create')).toBe(4);
    });

    it('leaves queries, and mutation fields not opted in, untouched', async () => {
      const { count, send } = fresh();
      const key = { 'idempotency-key': randomUUID() };
      for (let i = 0; i < 2; i++) {
        const answer = await send('query { payment(id: "p1") { id label } runs }', key);
        expect(answer.body.errors).toBeUndefined();
        await send('mutation { plain(cents: 1) refund(cents: 2) { id } }', key);
      }
      // No key needed either.
      expect((await send('mutation { plain(cents: 1) }')).body.data).toEqual({ plain: 1 });
      expect(count.runs.get('plain')).toBe(3);
      expect(count.runs.get('refund')).toBe(2);
    });

    it('makes the fields of the `fields` option idempotent too', async () => {
      const { count, send } = fresh({ fields: ['Mutation.refund'] });
      const key = { 'idempotency-key': randomUUID() };
      const first = await send('mutation { refund(cents: 2) { id } }', key);
      const second = await send('mutation { refund(cents: 2) { id } }', key);
      expect(second.body).toEqual(first.body);
      expect(count.runs.get('refund')).toBe(1);
    });

    it('scopes records by the caller: Authorization by default, or the scope option', async () => {
      const { count, send } = fresh();
      const key = randomUUID();
      await send(PAY, { 'idempotency-key': key, authorization: 'Bearer alice' });
      await send(PAY, { 'idempotency-key': key, authorization: 'Bearer bob' });
      await send(PAY, { 'idempotency-key': key, authorization: 'Bearer alice' });
      expect(count.runs.get('pay')).toBe(2);

      const tenant = fresh({ scope: (context) => context.request.headers.get('x-tenant') ?? '' });
      await tenant.send(PAY, { 'idempotency-key': key, authorization: 'Bearer alice', 'x-tenant': 't1' });
      await tenant.send(PAY, { 'idempotency-key': key, authorization: 'Bearer bob', 'x-tenant': 't1' });
      expect(tenant.count.runs.get('pay')).toBe(1);
    });

    it('hands the resolver its claim through currentClaim() (the fencing token)', async () => {
      const { send } = fresh();
      const answer = await send('mutation { pay(cents: 1) { token } }', { 'idempotency-key': randomUUID() });
      expect((answer.body.data!.pay as { token: number }).token).toBeGreaterThan(0);
    });
  });
}
