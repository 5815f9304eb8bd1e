import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ProofReport, runProof } from '../../proof/harness.js';
import { PROFILES } from '../../proof/profiles.js';
import { markdown, storeName } from '../../proof/report.js';
import { requireService } from '../support/services.js';

// The short version of `npm run proof` (docs/guarantees.md): the same harness, small sizes, the profile's stores at
// once (Redis, pg's transactional mode and the same through Kysely).
// 4 app server processes (Express, Fastify, Hono, node:http) per store, 2 client processes retrying like real
// clients, and every fault of the plan (SIGKILL and SIGSTOP of a server mid-request, store restart, partition,
// latency); the effect ledger and the checker decide. The report lands in .tmp/proof/.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const profile = PROFILES.short;
let report: ProofReport;

beforeAll(async () => {
  await requireService('postgres');
  const outDir = join(ROOT, '.tmp/proof');
  mkdirSync(outDir, { recursive: true });
  report = await runProof({
    ...profile,
    profile: 'short',
    outDir: join(outDir, 'runs'),
    keep: false,
    log: () => {},
  });
  writeFileSync(join(outDir, `short-${report.runId}.json`), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(outDir, `short-${report.runId}.md`), markdown(report));
  // Three stores at once on the 2 cores: 45–68 s measured while other work loaded the machine; the margin is for a
  // whole `npm test` running beside it.
}, 120_000);

describe('the proof, short: exactly once over HTTP under injected faults', () => {
  for (const kind of profile.stores) {
    it(`${storeName(kind)}: no violation`, () => {
      const store = report.stores.find((candidate) => candidate.kind === kind)!;
      expect(store.faults.length, 'every fault of the plan was injected').toBe(profile.faults.length);
      expect(store.requests).toBeGreaterThanOrEqual(profile.requests);
      const failing = store.result.checks
        .filter((check) => check.count > 0)
        .map((check) => `${check.name}: ${check.count} ${JSON.stringify(check.examples.slice(0, 2))}`);
      expect(failing, `violations (report .tmp/proof/short-${report.runId}.md)`).toEqual([]);
    });
  }
});
