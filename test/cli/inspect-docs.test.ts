// docs/cli.md tells a new user how to look at the record the demo just stored: run the demo's request, then the
// `inspect` line exactly as the page prints it, against the built CLI, on each store the page shows it for.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { requireService } from '../support/services.js';
import { oncely, serveDemo } from './support/cli.js';

const page = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');

/** The `npx oncely inspect …` lines of the page that say they find the demo's record (they name its key). */
function documentedDemoInspects(): string[] {
  return page
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('npx oncely inspect ') && line.includes('--key order-42'));
}

/** Splits a command line as bash does for the quoting the page uses: '…', $'…' (with \n) and bare words. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  const pattern = /\$'((?:[^'\\]|\\.)*)'|'([^']*)'|(\S+)/g;
  for (const match of line.matchAll(pattern)) {
    if (match[1] !== undefined)
      words.push(match[1].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c)));
    else words.push(match[2] ?? match[3]!);
  }
  return words;
}

describe('docs/cli.md: inspect finds the demo’s record', () => {
  it('the page shows the demo’s inspect line for Redis and for PostgreSQL', () => {
    const lines = documentedDemoInspects();
    expect(lines.some((line) => line.includes('--store redis'))).toBe(true);
    expect(lines.some((line) => line.includes('--store postgres'))).toBe(true);
  });

  for (const store of ['redis', 'postgres'] as const) {
    it(`the documented line finds the record the README's curl made on ${store}`, async () => {
      await requireService(store);
      const line = documentedDemoInspects().find((l) => l.includes(`--store ${store}`));
      expect(line, 'docs/cli.md shows no inspect line for the demo on this store').toBeDefined();
      const demo = await serveDemo(['--store', store]);
      try {
        // The README's curl: no Authorization header.
        const answer = await fetch(`${demo.url}/payments`, {
          method: 'POST',
          headers: { 'idempotency-key': 'order-42', 'content-type': 'application/json' },
          body: '{"amount": 1999, "currency": "EUR"}',
        });
        expect(answer.status).toBe(201);
        // `[--delete]` is the page's notation for an optional flag, left out here.
        const [npx, bin, ...args] = shellWords(line!).filter((word) => !/^\[.*\]$/.test(word));
        expect([npx, bin]).toEqual(['npx', 'oncely']);
        const result = await oncely(args);
        expect(result.code, result.stderr).toBe(0);
        expect(result.stdout).not.toMatch(/no record/);
        expect(result.stdout).toMatch(/state\s*│?\s*completed/);
        expect(result.stdout).toMatch(/status 201/);
        expect(result.stdout).toContain('"amount":1999');
      } finally {
        await demo.stop();
      }
    });
  }
});
