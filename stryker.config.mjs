// @ts-check
// `npm run mutate` (scripts/mutate.mjs) runs Stryker once per group of stryker/groups.mjs, naming the group in
// ONCELY_MUTATE_GROUP; `npx stryker run` without it mutates every group at once against all their tests (slower:
// each mutant then meets every test that executes it). Figures, survivors and how to read them: docs/mutation.md.
// The Lua scripts and SQL statements are beyond Stryker; test/redis/script-guards.test.ts and
// test/postgres/sql-guards.test.ts break their guards by hand instead.
import { selectedGroup } from './stryker/groups.mjs';

const group = selectedGroup();

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts', related: false },
  plugins: ['@stryker-mutator/vitest-runner', './stryker/message-text-ignorer.mjs'],
  ignorers: ['message-text'],
  mutate: [...group.mutate, '!src/**/*.generated.ts'],
  // Each mutant runs only the tests that execute it (per-test coverage from the dry run), and stops at the first
  // failure. A mutant that runs at module load (a constant's initializer) would need every test file reloaded:
  // those are left out of the score and listed as ignored (docs/mutation.md, "Static mutants").
  coverageAnalysis: 'perTest',
  ignoreStatic: true,
  // Keeps vitest's worker thread from one mutant's run to the next (why, and its bound: the module's header).
  testRunnerNodeArgs: ['--import', './stryker/keep-test-worker.mjs'],
  // Two cores: one vitest worker per core (the Redis and PostgreSQL servers share them).
  concurrency: 2,
  // A mutant that makes a test wait forever (a lease never given up, a waitFor never woken) fails that test at
  // vitest's testTimeout, and a hook at its hookTimeout (2.5 s each, vitest.mutate.config.ts). This timeout, the
  // normal run time × 1.5 + 5.5 s, is above the two together; it is for the rest (a busy loop), and costs a
  // restart of the test runner.
  timeoutFactor: 1.5,
  timeoutMS: 5_500,
  // The sandbox needs src, test, docs (a policy test reads docs/errors.md) and the configs; not the rest.
  ignorePatterns: ['bench', 'proof', 'examples', 'dist', 'coverage', 'reports', '.tmp', '*.log'],
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${group.name}.html` },
  jsonReporter: { fileName: `reports/mutation/${group.name}.json` },
  incrementalFile: `reports/mutation/${group.name}.incremental.json`,
  // The 85% floor applies to the whole (scripts/mutate.mjs adds the groups up), not to each group.
  thresholds: { high: 90, low: 85, break: null },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
