/**
 * @module The Lambda HTTP suite's body, run once per store by test/lambda/http*.test.ts: the Lambda HTTP layer on
 * each event source (API Gateway REST, HTTP API, Function URL), through each entry (the wrapper, Middy with the
 * middleware): the answers of docs/http.md, and replays that are the first result byte for byte, as API Gateway
 * would send them.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/index.js';
import type { LambdaIdempotencyOptions } from '../../src/lambda/index.js';
import type { StoreSetup } from '../support/stores.js';
import {
  contextOf,
  ENTRIES,
  type Entry,
  entryOf,
  eventOf,
  SOURCES,
  type Source,
  sleep,
  type TestHandler,
  unique,
} from './support.js';

export interface Result {
  readonly statusCode: number;
  readonly headers?: Record<string, string>;
  readonly multiValueHeaders?: Record<string, string[]>;
  readonly cookies?: string[];
  readonly body: string;
  readonly isBase64Encoded?: boolean;
}

export const problem = (result: Result) =>
  JSON.parse(result.body) as { type: string; status: number; reason?: string };

/** A payments handler: counts its runs, answers 201 JSON with the amount it was sent. */
function payments() {
  const runs: { attempt: number | undefined; takeover: boolean | undefined }[] = [];
  const handler: TestHandler = async (event, _context, { idempotency }) => {
    runs.push({ attempt: idempotency?.attempt, takeover: idempotency?.takeover });
    const sent = JSON.parse(event.body ?? '{}') as { amount?: number };
    return {
      statusCode: 201,
      headers: { 'content-type': 'application/json', 'x-payment': `pay_${runs.length}` },
      body: JSON.stringify({ id: `pay_${runs.length}`, amount: sent.amount }),
    };
  };
  return { runs, handler };
}

/** Two results are the same HTTP response: status, body bytes, encoding, headers (the replay marks itself). */
function expectReplayOf(replay: Result, first: Result): void {
  expect(replay.statusCode).toBe(first.statusCode);
  expect(replay.body).toBe(first.body);
  expect(replay.isBase64Encoded ?? false).toBe(first.isBase64Encoded ?? false);
  expect(replay.headers?.['idempotent-replayed']).toBe('true');
  const { 'idempotent-replayed': _, ...headers } = replay.headers ?? {};
  expect(headers).toEqual(first.headers ?? {});
}

/** Every case of the suite on `setup`'s store, from each source through each entry. */
export function runLambdaHttp(setup: StoreSetup): void {
  describe(`oncely/lambda on ${setup.name}`, () => {
    describe.each(SOURCES.flatMap((source) => ENTRIES.map((entry) => ({ source, entry }))))(
      '$source through the $entry',
      ({ source, entry }: { source: Source; entry: Entry }) => {
        let store: Store;
        beforeAll(() => {
          store = setup.create();
        });
        const invoke = (handler: TestHandler, options: Partial<LambdaIdempotencyOptions> = {}) =>
          entryOf(entry, { store, logger: false, ...options }, handler);
        const send = (key?: string | readonly string[], extra: Parameters<typeof eventOf>[1] = {}) =>
          eventOf(source, { ...(key === undefined ? {} : { key }), ...extra });

        it('the first invocation runs; a retry replays its result byte for byte and runs nothing', async () => {
          const { runs, handler } = payments();
          const call = invoke(handler);
          const key = unique('first');
          const first = (await call(send(key))) as Result;
          const replay = (await call(send(key))) as Result;
          expect(first.statusCode).toBe(201);
          expect(first.headers?.['idempotent-replayed']).toBeUndefined();
          expectReplayOf(replay, first);
          expect(runs).toEqual([{ attempt: 1, takeover: false }]);
        });

        it('a key taken from the body (key option, as Powertools users key by orderId): replays without a header', async () => {
          const { runs, handler } = payments();
          const call = invoke(handler, {
            key: (_event, body) => (body as { orderId?: string } | undefined)?.orderId,
          });
          const orderId = unique('order');
          const body = JSON.stringify({ orderId, amount: 7 });
          const first = (await call(send(undefined, { body }))) as Result;
          const replay = (await call(send(undefined, { body }))) as Result;
          expect(first.statusCode).toBe(201);
          expectReplayOf(replay, first);
          expect(runs).toHaveLength(1);
          const none = (await call(send(undefined, { body: '{"amount":7}' }))) as Result;
          expect([none.statusCode, problem(none).type]).toEqual([400, expect.stringMatching(/key-missing$/)]);
        });

        it('a base64 body (isBase64Encoded) replays as the same bytes, base64 again', async () => {
          const bytes = randomBytes(4096); // binary, and over compressAboveBytes: stored compressed
          let runs = 0;
          const call = invoke(async () => {
            runs++;
            return {
              statusCode: 200,
              headers: { 'content-type': 'image/png' },
              body: bytes.toString('base64'),
              isBase64Encoded: true,
            };
          });
          const key = unique('binary');
          const request = Buffer.from('{"amount":5}').toString('base64');
          const first = (await call(send(key, { body: request, base64: true }))) as Result;
          const replay = (await call(send(key, { body: request, base64: true }))) as Result;
          expectReplayOf(replay, first);
          expect(Buffer.from(replay.body, 'base64').equals(bytes)).toBe(true);
          expect(runs).toBe(1);
          // The request body counts decoded: the same bytes sent as text are the same request.
          const asText = (await call(send(key, { body: '{"amount":5}' }))) as Result;
          expect(asText.headers?.['idempotent-replayed']).toBe('true');
        });

        if (source === 'rest') {
          it('multiValueHeaders replay line for line, never Set-Cookie', async () => {
            const call = invoke(async () => ({
              statusCode: 201,
              headers: { 'content-type': 'text/plain' },
              multiValueHeaders: { link: ['</a>; rel=a', '</b>; rel=b'], 'set-cookie': ['a=1', 'b=2'] },
              body: 'héllo ✓',
            }));
            const key = unique('multi');
            await call(send(key));
            const replay = (await call(send(key))) as Result;
            expect(replay.body).toBe('héllo ✓');
            expect(replay.multiValueHeaders).toEqual({ link: ['</a>; rel=a', '</b>; rel=b'] });
            expect(replay.headers?.['content-type']).toBe('text/plain');
          });
        } else {
          it('cookies are never replayed, and keepHeaders refuses to keep them', async () => {
            const result = { statusCode: 201, cookies: ['session=abc; HttpOnly', 'theme=dark'], body: 'ok' };
            expect(() => invoke(async () => result, { keepHeaders: ['set-cookie'] })).toThrow(
              /keepHeaders cannot keep set-cookie/,
            );
            const dropped = invoke(async () => result);
            const other = unique('cookies');
            expect(((await dropped(send(other))) as Result).cookies).toEqual(result.cookies);
            expect(((await dropped(send(other))) as Result).cookies).toBeUndefined();
          });

          it('session cookies (format 2.0 `cookies`) name the client: another session has its own record', async () => {
            const { runs, handler } = payments();
            const call = invoke(handler);
            const key = unique('session');
            const as = (session: string) => {
              const event = send(key) as { cookies?: string[] };
              event.cookies = [`sessionid=${session}`, 'theme=dark'];
              return event as ReturnType<typeof send>;
            };
            await call(as('alice'));
            expect(((await call(as('alice'))) as Result).headers?.['idempotent-replayed']).toBe('true');
            expect(((await call(as('bob'))) as Result).headers?.['idempotent-replayed']).toBeUndefined();
            expect(runs).toHaveLength(2);
          });

          it('a result without statusCode is the 200 application/json API Gateway infers, and replays so', async () => {
            const call = invoke(async () => ({ id: 'pay_1', paid: true }));
            const key = unique('inferred');
            expect(await call(send(key))).toEqual({ id: 'pay_1', paid: true });
            const replay = (await call(send(key))) as Result;
            expect(replay.statusCode).toBe(200);
            expect(replay.headers?.['content-type']).toBe('application/json');
            expect(JSON.parse(replay.body)).toEqual({ id: 'pay_1', paid: true });
          });
        }

        if (source === 'rest') {
          it('a result that is no proxy response (no statusCode) is returned as it is and not stored', async () => {
            let runs = 0;
            const call = invoke(async () => ({ run: ++runs }));
            const key = unique('malformed');
            expect(await call(send(key))).toEqual({ run: 1 });
            // API Gateway answers such a result with 502; the retry runs again instead of replaying it.
            expect(await call(send(key))).toEqual({ run: 2 });
          });
        }

        it('a concurrent duplicate gets 409 problem+json with Retry-After; after the first ends, a replay', async () => {
          let release!: () => void;
          const gate = new Promise<void>((resolve) => (release = resolve));
          const { runs, handler } = payments();
          const call = invoke(async (...args) => {
            await gate;
            return handler(...args);
          });
          const key = unique('busy');
          const first = call(send(key));
          await sleep(30);
          const duplicate = (await call(send(key))) as Result;
          expect(duplicate.statusCode).toBe(409);
          expect(duplicate.headers?.['content-type']).toBe('application/problem+json');
          expect(duplicate.headers?.['retry-after']).toBe('1');
          expect(problem(duplicate).type).toMatch(/#request-in-progress$/);
          release();
          const done = (await first) as Result;
          expectReplayOf((await call(send(key))) as Result, done);
          expect(runs).toHaveLength(1);
        });

        it('the same key with another body gets 422, and the original record is untouched', async () => {
          const { runs, handler } = payments();
          const call = invoke(handler);
          const key = unique('reused');
          const first = (await call(send(key, { body: '{"amount":1}' }))) as Result;
          const reused = (await call(send(key, { body: '{"amount":2}' }))) as Result;
          expect(reused.statusCode).toBe(422);
          expect(problem(reused).type).toMatch(/#key-reused$/);
          expectReplayOf((await call(send(key, { body: '{"amount":1}' }))) as Result, first);
          expect(runs).toHaveLength(1);
        });

        it('no key: 400 key-missing, the handler never runs; with required: false it runs unprotected', async () => {
          const { runs, handler } = payments();
          const missing = (await invoke(handler)(send())) as Result;
          expect(missing.statusCode).toBe(400);
          expect(problem(missing).type).toMatch(/#key-missing$/);
          expect(runs).toHaveLength(0);
          const optional = invoke(handler, { required: false });
          await optional(send());
          await optional(send());
          expect(runs).toEqual([
            { attempt: undefined, takeover: undefined },
            { attempt: undefined, takeover: undefined },
          ]);
        });

        it('a malformed key and a key sent on two lines get 400 key-malformed', async () => {
          const { runs, handler } = payments();
          const call = invoke(handler);
          const long = (await call(send('k'.repeat(256)))) as Result;
          expect(long.statusCode).toBe(400);
          expect(problem(long).type).toMatch(/#key-malformed$/);
          const twice = (await call(send([unique('a'), unique('b')]))) as Result;
          expect(twice.statusCode).toBe(400);
          // REST keeps the lines apart (multiValueHeaders); format 2.0 joins them with a comma, refused as such.
          expect(problem(twice).reason).toBe(source === 'rest' ? 'multiple' : 'bad-characters');
          expect(runs).toHaveLength(0);
        });

        it('a body declared JSON that does not parse gets 400 body-unparseable and leaves no record', async () => {
          const { runs, handler } = payments();
          const call = invoke(handler);
          const key = unique('unparseable');
          const broken = (await call(send(key, { body: '{"amount":' }))) as Result;
          expect(broken.statusCode).toBe(400);
          expect(problem(broken).type).toMatch(/#body-unparseable$/);
          expect(((await call(send(key, { body: '{"amount":3}' }))) as Result).statusCode).toBe(201);
          expect(runs).toHaveLength(1);
        });

        it('a handler that throws fails the invocation and lets the key go: the retry runs (attempt 2)', async () => {
          const { runs, handler } = payments();
          let failures = 1;
          const call = invoke(async (...args) => {
            const result = await handler(...args);
            if (failures-- > 0) throw new Error('downstream timeout');
            return result;
          });
          const key = unique('throws');
          await expect(call(send(key))).rejects.toThrow('downstream timeout');
          expect(((await call(send(key))) as Result).statusCode).toBe(201);
          expect(runs.map((run) => run.attempt)).toEqual([1, 2]);
        });

        it('a 5xx result is returned but not stored: the retry runs again', async () => {
          let runs = 0;
          const call = invoke(async () => ({ statusCode: ++runs === 1 ? 503 : 201, body: `run ${runs}` }));
          const key = unique('5xx');
          expect(((await call(send(key))) as Result).statusCode).toBe(503);
          expect(((await call(send(key))) as Result).body).toBe('run 2');
          expect(((await call(send(key))) as Result).body).toBe('run 2');
        });

        it('a GET passes through untouched, key or not', async () => {
          const { runs, handler } = payments();
          const call = invoke(handler);
          const key = unique('get');
          await call(send(key, { method: 'GET' }));
          await call(send(key, { method: 'GET' }));
          expect(runs).toHaveLength(2);
        });

        it("the lease ends with the invocation: a timed-out invocation's key is taken over once its time is up", async () => {
          const { runs, handler } = payments();
          let hang = true;
          const call = invoke(
            async (...args) => {
              const result = await handler(...args);
              // The first invocation never answers, as one that times out (Lambda kills it at its deadline).
              if (hang) {
                hang = false;
                await new Promise(() => {});
              }
              return result;
            },
            { leaseMs: 60_000 },
          );
          const key = unique('timeout');
          void call(send(key), contextOf(600)).catch(() => {});
          await sleep(150);
          expect(((await call(send(key))) as Result).statusCode).toBe(409);
          await sleep(600);
          // A whole leaseMs (60 s) would still hold the key; the invocation's own deadline did not.
          expect(((await call(send(key))) as Result).statusCode).toBe(201);
          expect(runs.map((run) => run.attempt)).toEqual([1, 2]);
        });

        it('under IAM auth a retry signed anew (another Authorization) replays; another principal has its own record', async () => {
          const { runs, handler } = payments();
          const call = invoke(handler);
          const key = unique('iam');
          const signed = (signature: string, userArn: string) =>
            send(key, {
              userArn,
              headers: {
                Authorization: `AWS4-HMAC-SHA256 Credential=AKIA/20240101/us-east-1/execute-api/aws4_request, Signature=${signature}`,
              },
            });
          const first = (await call(signed('aaaa', 'arn:aws:iam::111122223333:user/alice'))) as Result;
          expectReplayOf(
            (await call(signed('bbbb', 'arn:aws:iam::111122223333:user/alice'))) as Result,
            first,
          );
          const other = (await call(signed('cccc', 'arn:aws:iam::111122223333:user/bob'))) as Result;
          expect(other.headers?.['idempotent-replayed']).toBeUndefined();
          // The route, not the query, names the record: the same key with another query is a reused key.
          const query = signed('dddd', 'arn:aws:iam::111122223333:user/alice') as {
            rawQueryString?: string;
            multiValueQueryStringParameters?: Record<string, string[]>;
          };
          if (source === 'rest') query.multiValueQueryStringParameters = { foo: ['other'] };
          else query.rawQueryString = 'other=1';
          expect(((await call(query as ReturnType<typeof send>)) as Result).statusCode).toBe(422);
          expect(runs).toHaveLength(2);
        });
      },
    );
  });
}
