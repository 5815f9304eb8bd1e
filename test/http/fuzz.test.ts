import { randomUUID } from 'node:crypto';
import express from 'express';
import express4 from 'express4';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseKeyHeader } from '../../src/http/key-header.js';
import { PROBLEM_CONTENT_TYPE } from '../../src/http/problem.js';
import { memoryStore, redisStore } from '../support/stores.js';
import { expressHarness } from './apps/express.js';
import { fastifyHarness } from './apps/fastify.js';
import { honoHarness, honoNodeServerHarness } from './apps/hono.js';
import { nodeHarness } from './apps/node.js';
import { defaultId, type StoreSetup, withApp } from './support/fixture.js';
import type { AdapterHarness } from './support/harness.js';
import { oneConnection, type RawResponse, rawRequest } from './support/raw-http.js';

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
 * Over arbitrary keys, bodies and headers, every answer is a documented one (never a 500 or a crash),
 * and whatever ran is stored intact: its retry replays the same bytes and the record reads back completed.
 */
function fuzz(harness: AdapterHarness, setup: StoreSetup, runs: number) {
  it(`${harness.name} × ${setup.name}: ${runs} arbitrary requests answer as documented and never corrupt a record`, () =>
    withApp(harness, setup, {}, async ({ app, store, counters }) => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(key, contentType, body, extras, async (rawKey, type, payload, extra) => {
          // A fresh Authorization per run and adapter gives every run its own scope, so runs never share records (the
          // adapters of this file share one Redis prefix, and fast-check draws its edge keys again and again).
          const authorization = `Bearer ${harness.name} run-${++run}`;
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

// Header framing: on one keep-alive connection, requests with zero to three Idempotency-Key lines and handlers that
// write part of a body, then end, throw, set a header or change the status.
const keyLines = fc.oneof(
  { weight: 3, arbitrary: fc.constant<'valid'>('valid').map((kind) => [kind] as const) },
  { weight: 1, arbitrary: fc.array(headerText(20), { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.array(fc.uuid(), { minLength: 2, maxLength: 3 }) },
);
const partial = fc.record({
  chunks: fc.integer({ min: 0, max: 3 }),
  mode: fc.constantFrom('end', 'throw', 'header', 'status'),
});
const step = fc.record({ lines: keyLines, partial: fc.option(partial, { nil: undefined }) });

/** What a /partial request does, with the layer, as the framework does without it. */
function expectedPartial(harness: AdapterHarness, chunks: number, mode: string) {
  const wrote = chunks > 0;
  if (mode === 'end') return { status: 201, stored: true } as const;
  if (mode === 'header') return wrote ? ('closed' as const) : ({ status: 201, stored: true } as const);
  if (mode === 'status')
    return wrote ? ({ status: 201, stored: true } as const) : ({ status: 500, stored: false } as const);
  // throw: Express closes the connection once headers would be out; node's wrapper answers handler-failed.
  if (wrote && harness.name.startsWith('express')) return 'closed' as const;
  return { status: 500, stored: false } as const;
}

/**
 * Header framing: whatever the key lines and however a handler breaks off its response, every answer on a
 * keep-alive connection is well framed (never a parse error of the next one), two key lines are a 400, a
 * connection is closed only where the framework closes it without the layer, and the key is then released.
 */
function fuzzFraming(harness: AdapterHarness, runs: number) {
  it(`${harness.name}: ${runs} sequences on one keep-alive connection stay framed (key lines, partial writes)`, () =>
    withApp(harness, memoryStore, {}, async ({ app }) => {
      const port = app.port!;
      let run = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 3 }), async (steps) => {
          const agent = oneConnection();
          const authorization = `Bearer ${harness.name} framing-${++run}`;
          try {
            for (const { lines, partial: spec } of steps) {
              const path = spec !== undefined && harness.partialWrites ? '/partial' : '/payments';
              const key = randomUUID();
              const sent = lines[0] === 'valid' ? [key] : (lines as readonly string[]);
              const headers: Record<string, string | readonly string[]> = {
                'content-type': 'application/json',
                authorization,
              };
              if (sent.length > 0) headers['idempotency-key'] = sent.length === 1 ? sent[0]! : sent;
              if (path === '/partial') headers['x-partial'] = `${spec!.chunks}:${spec!.mode}`;
              const send = () => outcomeOf(rawRequest(port, { path, agent, headers, body: '{}' }));
              const first = await send();
              if (sent.length !== 1) {
                expect(first, JSON.stringify(first)).toMatchObject({ status: 400 });
                const problem = JSON.parse((first as RawResponse).body.toString());
                expect(problem.reason ?? 'missing').toBe(sent.length === 0 ? 'missing' : 'multiple');
                continue;
              }
              let parsed: string | undefined;
              try {
                parsed = parseKeyHeader(sent[0]);
              } catch {
                expect(first, JSON.stringify(first)).toMatchObject({ status: 400 });
                continue;
              }
              if (parsed === undefined) continue;
              const expected =
                path === '/partial'
                  ? expectedPartial(harness, spec!.chunks, spec!.mode)
                  : ({ status: 201, stored: true } as const);
              if (expected === 'closed') expect(typeof first, JSON.stringify(first)).toBe('string');
              else expect((first as RawResponse).status, JSON.stringify(first)).toBe(expected.status);
              if (expected !== 'closed' && expected.stored) {
                const replay = (await send()) as RawResponse;
                expect(replay.headers['idempotent-replayed']).toBe('true');
                expect(replay.body.equals((first as RawResponse).body)).toBe(true);
              } else {
                // Released: the same request runs again (here ending normally), fresh and well framed.
                if (path === '/partial') headers['x-partial'] = '0:end';
                const retry = (await send()) as RawResponse;
                expect(retry.status, JSON.stringify(retry)).toBe(201);
                expect(retry.headers['idempotent-replayed']).toBeUndefined();
              }
            }
            // Whatever came before, the connection (or its replacement) carries a plain request.
            const after = await outcomeOf(
              rawRequest(port, {
                path: '/payments',
                agent,
                headers: {
                  'content-type': 'application/json',
                  authorization,
                  'idempotency-key': randomUUID(),
                },
                body: '{}',
              }),
            );
            expect((after as RawResponse).status, JSON.stringify(after)).toBe(201);
          } finally {
            agent.destroy();
          }
        }),
        { numRuns: runs },
      );
    }));
}

/** A response, or the client's error as text; a parse error (a mis-framed response) fails the test at once. */
async function outcomeOf(pending: Promise<RawResponse>): Promise<RawResponse | string> {
  try {
    return await pending;
  } catch (error) {
    const { code = '', message } = error as { code?: string; message: string };
    expect(`${code} ${message}`).not.toMatch(/HPE_/);
    return `${code} ${message}`;
  }
}

describe('HTTP fuzz: header framing', () => {
  fuzzFraming(expressHarness('express 5', express as never), 60);
  fuzzFraming(expressHarness('express 4', express4 as never), 40);
  fuzzFraming(nodeHarness, 60);
  fuzzFraming(honoNodeServerHarness, 40);
  fuzzFraming(fastifyHarness, 40);
});

describe('HTTP fuzz', () => {
  const redis = redisStore('fuzz');
  fuzz(honoHarness, redis, 250);
  fuzz(fastifyHarness, memoryStore, 250);
  fuzz(nodeHarness, memoryStore, 150);
  fuzz(expressHarness('express 5', express as never), redis, 150);
});
