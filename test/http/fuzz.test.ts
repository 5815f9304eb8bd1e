import express from 'express';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseKeyHeader } from '../../src/http/key-header.js';
import { PROBLEM_CONTENT_TYPE } from '../../src/http/problem.js';
import { expressHarness } from './apps/express.js';
import { fastifyHarness } from './apps/fastify.js';
import { honoHarness } from './apps/hono.js';
import { nodeHarness } from './apps/node.js';
import { defaultId, type StoreSetup, withApp } from './support/fixture.js';
import type { AdapterHarness } from './support/harness.js';
import { memoryStore, redisStore } from './support/stores.js';

// What an HTTP client can put in a header value (RFC 9110 field-value: HTAB, visible ASCII, obs-text 0x80-0xFF).
const headerChar = fc
  .oneof(fc.constant(0x09), fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }))
  .map((code) => String.fromCharCode(code));
const headerText = (maxLength: number) => fc.array(headerChar, { maxLength }).map((chars) => chars.join(''));
const key = fc.oneof(
  fc.uuid(),
  headerText(40),
  headerText(300),
  headerText(30).map((inner) => `"${inner}"`),
  fc.constantFrom('', '""', '"a\\"b"', '"a\\\\b"', '"\\x"', `"${'k'.repeat(255)}"`, 'k'.repeat(256)),
);
const contentType = fc.constantFrom(
  'application/json',
  'text/plain',
  'application/octet-stream',
  'application/problem+json',
);
const body = fc.oneof(
  fc.uint8Array({ maxLength: 200 }),
  fc.json().map((text) => Buffer.from(text)),
  fc.constant(Buffer.from('{"amount":1}')),
);
const extras = fc.record({
  replayedClaim: fc.option(fc.constantFrom('true', 'false', '1'), { nil: undefined }),
  xHeader: fc.option(headerText(20), { nil: undefined }),
});

// 415: Fastify's parser refuses media types it has no parser for, before any record exists.
const DOCUMENTED = new Set([201, 400, 413, 415, 422]);

/**
 * DESIGN §9: over arbitrary keys, bodies and headers, every answer is a documented one (never a 500 or a crash),
 * and whatever ran is stored intact: its retry replays the same bytes and the record reads back completed.
 */
function fuzz(harness: AdapterHarness, setup: StoreSetup, runs: number) {
  it(`${harness.name} × ${setup.name}: ${runs} arbitrary requests answer as documented and never corrupt a record`, () =>
    withApp(harness, setup, {}, async ({ app, store, counters }) => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(key, contentType, body, extras, async (rawKey, type, payload, extra) => {
          // A fresh Authorization per run gives every run its own scope, so runs never share records.
          const authorization = `Bearer run-${++run}`;
          const headers: Record<string, string> = {
            'idempotency-key': rawKey,
            'content-type': type,
            authorization,
          };
          if (extra.replayedClaim !== undefined) headers['idempotent-replayed'] = extra.replayedClaim;
          if (extra.xHeader !== undefined) headers['x-fuzz'] = extra.xHeader;
          const runsBefore = counters.total;
          const first = await app.request({ path: '/payments', headers, body: payload });
          expect(DOCUMENTED.has(first.status), `${first.status} ${first.body.toString()}`).toBe(true);
          let parsedKey: string | undefined;
          try {
            parsedKey = parseKeyHeader(rawKey);
          } catch {
            // Our 400 problem, or the framework's body parser refusing the body first: either way, no run.
            expect([400, 415]).toContain(first.status);
            if (harness.rawBytes) expect(first.headers['content-type']).toBe(PROBLEM_CONTENT_TYPE);
            expect(counters.total).toBe(runsBefore);
            return;
          }
          if (first.status !== 201) {
            expect(first.status, first.body.toString()).toBeLessThan(500);
            return;
          }
          expect(first.headers['idempotent-replayed']).toBeUndefined();
          const retry = await app.request({ path: '/payments', headers, body: payload });
          expect(retry.status).toBe(201);
          expect(retry.headers['idempotent-replayed']).toBe('true');
          expect(retry.body.equals(first.body)).toBe(true);
          const record = await store.get(defaultId('POST', '/payments', parsedKey!, authorization));
          expect(record?.state).toBe('completed');
          expect(record?.outcome?.status).toBe(201);
        }),
        { numRuns: runs },
      );
    }));
}

describe('HTTP fuzz', () => {
  const redis = redisStore('fuzz');
  fuzz(honoHarness, redis, 250);
  fuzz(fastifyHarness, memoryStore, 250);
  fuzz(nodeHarness, memoryStore, 150);
  fuzz(expressHarness('express 5', express as never), redis, 150);
});
