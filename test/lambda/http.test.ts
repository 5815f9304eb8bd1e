/**
 * @module The Lambda HTTP suite (./http-suite.ts) on the machine's Redis and PostgreSQL, and every store kind
 * refusing connections. MySQL and DynamoDB run the suite in files of their own (http-mysql.test.ts,
 * http-dynamodb.test.ts), so each file stays well under a minute.
 */
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore, redisStore } from '../support/stores.js';
import { problem, type Result, runLambdaHttp } from './http-suite.js';
import {
  contextOf,
  DOWN_STORES,
  downStores,
  ENTRIES,
  type Entry,
  entryOf,
  eventOf,
  SOURCES,
  type Source,
  type TestHandler,
  unique,
} from './support.js';

runLambdaHttp(redisStore('lambda_http'));
runLambdaHttp(postgresStore('lambda_http'));

describe('a store that is down: 503 store-unavailable with Retry-After, the handler never runs', () => {
  let down: Awaited<ReturnType<typeof downStores>>;
  beforeAll(async () => {
    down = await downStores();
  });
  afterAll(async () => {
    await down.close();
  });

  describe.each(SOURCES.flatMap((source) => ENTRIES.map((entry) => ({ source, entry }))))(
    '$source through the $entry',
    ({ source, entry }: { source: Source; entry: Entry }) => {
      it.each(DOWN_STORES)('%s refusing connections', async (kind) => {
        let runs = 0;
        const handler: TestHandler = async () => ({ statusCode: 201, body: String(++runs) });
        const options = { store: down[kind], logger: false, breaker: false } as const;
        const call = entryOf(entry, options, handler);
        const answer = (await call(
          eventOf(source, { key: unique('down') }),
          contextOf() as Context,
        )) as Result;
        expect(answer.statusCode).toBe(503);
        expect(answer.headers?.['retry-after']).toBe('1');
        expect(problem(answer).type).toMatch(/#store-unavailable$/);
        expect(runs).toBe(0);
        // failOpen (unsafe, explicit) runs the handler unprotected instead.
        const open = entryOf(entry, { ...options, failOpen: true }, handler);
        expect(((await open(eventOf(source, { key: unique('down') }))) as Result).statusCode).toBe(201);
      });
    },
  );
});
