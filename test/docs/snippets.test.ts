import { describe, expect, it } from 'vitest';
import { parseDocumentation } from './markdown.js';
import { ruleProblems } from './rules.js';
import { typecheckSnippets } from './typecheck.js';

/**
 * The ```ts blocks of README.md and docs/** are code a reader copies: each one type-checks under the repository's
 * strict tsconfig as the only file of its project (typecheck.ts), with `oncely/*` resolved to the sources and
 * nothing else declared for it: what the block uses, it imports, declares (`declare const pool: Pool`, the
 * reader's own) or defines. Blocks marked `<!-- snippet: run -->` also run: snippets-run.test.ts. The checker
 * itself is tested in checker.test.ts.
 */
const parsed = parseDocumentation();
const snippets = [...parsed.values()].flatMap((file) => file.snippets);

describe('documentation code blocks', () => {
  it('are found, and every snippet marker is well-formed', () => {
    const problems = [...parsed.values()].flatMap((file) => file.problems);
    expect(problems.map((p) => `${p.file}:${p.line}: ${p.message}`)).toEqual([]);
    // A parser that stopped finding blocks would pass every check below: there are dozens.
    expect(snippets.length).toBeGreaterThan(40);
    expect(snippets.filter((s) => s.mode === 'run').length).toBeGreaterThan(25);
    // A fragment is compiled nowhere: the exception, for an excerpt that cannot be whole. A block that can be
    // made whole (declare what is the reader's own, stub the rest) should be.
    const fragments = snippets.filter((s) => s.mode === 'fragment').map((s) => `${s.file}:${s.line}`);
    expect(
      fragments.length,
      `more than 5 blocks marked fragment: ${fragments.join(', ')}`,
    ).toBeLessThanOrEqual(5);
  });

  it('each type-check as pasted into an empty file, with oncely/* resolved to the sources', async () => {
    const checked = snippets.filter((snippet) => snippet.mode !== 'fragment');
    const errors = (await typecheckSnippets(checked)).map((d) => `${d.where}: TS${d.code}: ${d.message}`);
    if (errors.length > 0)
      throw new Error(`${errors.length} type error(s) in documentation blocks:\n${errors.join('\n')}`);
  }, 180_000);

  it("attach .on('error') to every Redis client they create, and declare no value in a block that runs", () => {
    const problems = snippets.flatMap(ruleProblems).map((p) => `${p.where}: ${p.message}`);
    if (problems.length > 0)
      throw new Error(`${problems.length} problem(s) in documentation blocks:\n${problems.join('\n')}`);
  });
});
