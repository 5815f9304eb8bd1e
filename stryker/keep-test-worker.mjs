// Loaded into each of Stryker's test runner processes (`testRunnerNodeArgs` in stryker.config.mjs), before vitest.
//
// Why: Stryker's vitest runner runs every mutant as one `vitest.start()` of the tests that cover it, and vitest 3
// ends each such run by recycling its worker thread (`Tinypool#recycleWorkers`, meant to keep test environments
// apart). The next mutant's run then starts a new thread and imports vitest's runtime, the library and the test's
// dependencies afresh: measured here, 300–440 ms per mutant for a test that itself takes under 1 ms.
//
// Every group runs in one environment (node), so there is nothing to keep apart: the worker is kept, and with it
// the modules it has loaded. Mutants are switched at run time (Stryker's mutant schemata read the active mutant
// from a global that its setup file sets before each run), so a loaded module serves every mutant. Test files are
// still run afresh each time: vitest drops a test file from the worker's module cache before it runs it.
//
// What a kept worker can carry from one run to the next is what a mutant leaks (an unclosed pool, a timer): every
// RECYCLE_EVERY runs the worker is recycled all the same, so a leak stays bounded. ONCELY_MUTATE_FRESH_WORKER=1
// turns this off (a new worker per run, as vitest does it), to tell a kept worker's doing from a test's.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

// The tinypool vitest itself loads (a copy nested under vitest would otherwise be missed, and nothing kept).
const fromVitest = createRequire(createRequire(import.meta.url).resolve('vitest/package.json'));
const { Tinypool } = await import(pathToFileURL(fromVitest.resolve('tinypool')).href);

const RECYCLE_EVERY = 50;

const recycle = Tinypool.prototype.recycleWorkers;
if (typeof recycle !== 'function')
  throw new Error(
    'stryker/keep-test-worker.mjs: tinypool has no recycleWorkers any more; remove this module',
  );

let runs = 0;
if (process.env.ONCELY_MUTATE_FRESH_WORKER !== '1')
  Tinypool.prototype.recycleWorkers = async function recycleWorkers(options = {}) {
    runs += 1;
    // A change of runtime (threads to child_process) must still recycle; vitest never asks for one here.
    if (options.runtime === undefined && runs % RECYCLE_EVERY !== 0) return;
    return recycle.call(this, options);
  };
