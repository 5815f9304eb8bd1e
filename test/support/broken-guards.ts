import type { ConformanceOptions } from '../../src/testing/harness.js';
import { runStoreConformance } from '../../src/testing/index.js';

/**
 * A guard of a Lua script or SQL statement (a fence, state, expiry or retention check, a token rise), and how it is
 * broken: `find` is replaced by `replace` in the asset's text (as embedded, fragments included). Stryker cannot
 * mutate Lua or SQL; this list is the hand-written mutation test of those guards (docs/mutation.md).
 */
export interface Guard {
  /** The asset, as named by the store: `complete` for complete-1.lua or complete.sql. */
  readonly asset: string;
  /** What the guard holds, in a few words. */
  readonly name: string;
  /** Text that occurs exactly once in the asset. */
  readonly find: string;
  readonly replace: string;
  /** More edits of the same kind, when the guard is written in two places. */
  readonly also?: ReadonlyArray<readonly [find: string, replace: string]>;
}

/** The asset's text with the guard broken; throws unless each `find` occurs exactly once (the guard moved). */
export function breakGuard(source: string, guard: Guard): string {
  let text = source;
  for (const [find, replace] of [[guard.find, guard.replace] as const, ...(guard.also ?? [])]) {
    const parts = text.split(find);
    if (parts.length !== 2) {
      throw new Error(
        `${guard.asset}: "${find}" occurs ${parts.length - 1} times, not once; update the guard list`,
      );
    }
    text = parts.join(replace);
  }
  return text;
}

/** Which conformance case failed first, and how; undefined when every case passed. */
export interface Caught {
  readonly test: string;
  readonly error: unknown;
}

/**
 * Runs the conformance suite (`oncely/testing`) one case after another, outside the test runner, and stops at the
 * first failure: a suite that catches a broken guard fails fast, one that misses it runs whole.
 */
export async function firstFailure(
  options: Omit<ConformanceOptions, 'harness' | 'name'>,
): Promise<Caught | undefined> {
  const cases: { test: string; body: () => Promise<void> }[] = [];
  const path: string[] = [];
  runStoreConformance({
    ...options,
    name: 'broken guard',
    harness: {
      describe: (name, body) => {
        path.push(name);
        body();
        path.pop();
      },
      it: (name, body) => cases.push({ test: [...path, name].join(' > '), body }),
    },
  });
  for (const { test, body } of cases) {
    try {
      await body();
    } catch (error) {
      return { test, error };
    }
  }
  return undefined;
}

/**
 * True when a case failed because the store answered wrong (an assertion of the suite, directly or inside the
 * model-based property) or threw where it owed an answer, not because the broken asset no longer compiles: a
 * guard must be caught by what the suite checks. Lua compile errors and SQLSTATE class 42 (syntax, undefined
 * names) are the asset's text gone wrong, not the guard.
 */
export function isWrongAnswer(error: unknown): boolean {
  const text = `${String(error)} ${String((error as { cause?: unknown })?.cause ?? '')}`;
  return !/Error compiling script|SQLSTATE 42/.test(text);
}
