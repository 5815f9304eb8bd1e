import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
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
    reporters: ['default'],
    // Mutants are switched at run time (Stryker's mutant schemata), so modules need not be loaded afresh for
    // each run: keeping them halves the time per mutant.
    isolate: false,
    sequence: { sequencer: ListedOrder },
  },
});
