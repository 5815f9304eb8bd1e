import { resolve } from 'node:path';
import type { File, Task } from 'vitest';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type Reporter, type TestSpecification } from 'vitest/node';
import { selectedGroup } from './stryker/groups.mjs';
import base from './vitest.config.js';

const group = selectedGroup();
const order = group.tests.map((path) => resolve(path));

/** Runs the group's files in the order listed, focused tests first: the first failure ends a mutant's run. */
class ListedOrder extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => order.indexOf(file.moduleId);
    return [...files].sort((a, b) => rank(a) - rank(b));
  }
}

/**
 * A test file whose own `beforeAll` fails (a mutant broke the store's set-up, `migrate` say) reports its tests as
 * skipped, not failed, and Stryker's vitest runner then counts the mutant as survived by zero tests. The suite did
 * catch it (`npm test` fails on such a file), so those tests are reported failed with the hook's error here.
 */
class FailedSetUpFailsItsTests implements Reporter {
  onFinished(files: File[] = []): void {
    for (const file of files) {
      const errors = file.result?.errors;
      if (errors === undefined || errors.length === 0) continue;
      for (const test of testsOf(file)) {
        if (test.result?.state !== 'skip') continue;
        test.mode = 'run';
        test.result = { ...test.result, state: 'fail', errors };
      }
    }
  }
}

function testsOf(task: Task): Task[] {
  return task.type === 'suite' ? task.tasks.flatMap(testsOf) : [task];
}

/**
 * The tests `npm run mutate` runs against each mutant of one group (stryker/groups.mjs, chosen by
 * ONCELY_MUTATE_GROUP; all of them when unset): the fast unit and conformance tests of the mutated files, on the
 * memory store where that is enough, on the machine's Redis and PostgreSQL (127.0.0.1) where a store's own
 * TypeScript is mutated. Process storms, chaos tests and the proof are left out: they take seconds to minutes each.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: group.tests,
    reporters: ['default', new FailedSetUpFailsItsTests()],
    // Mutants are switched at run time (Stryker's mutant schemata), so modules need not be loaded afresh for
    // each run: keeping them halves the time per mutant.
    isolate: false,
    // Every test of a group takes under 1.5 s in a normal run (the slowest, PostgreSQL's "an abort ends a long
    // wait", sleeps 1.5 s on purpose; the next, 0.7 s). A mutant that makes one hang (a lease never given up, a
    // waiter never woken) fails it here, a killed mutant like any other, instead of waiting out Stryker's own
    // timeout, which also has to restart the test runner (see stryker.config.mjs). A hook (a schema's set-up, a
    // store's close) takes well under a second; test and hook together stay inside Stryker's timeout.
    testTimeout: 2_500,
    hookTimeout: 2_500,
    sequence: { sequencer: ListedOrder },
  },
});
