import { describe, expect, it } from 'vitest';
import { parseDocumentation } from './markdown.js';
import { typecheckSnippets } from './typecheck.js';

/**
 * The ```ts blocks of README.md and docs/** are code a reader copies: each one type-checks under the repository's
 * strict tsconfig, with `oncely/*` resolved to the sources and the placeholders (`order`, `pool`, …) declared once
 * in prelude.ts. Blocks marked `<!-- snippet: run -->` also run: snippets-run.test.ts.
 */
const parsed = parseDocumentation();
const snippets = [...parsed.values()].flatMap((file) => file.snippets);

describe('documentation code blocks', () => {
  it('are found, and every snippet marker is well-formed', () => {
    const problems = [...parsed.values()].flatMap((file) => file.problems);
    expect(problems.map((p) => `${p.file}:${p.line}: ${p.message}`)).toEqual([]);
    // A parser that stopped finding blocks would pass every check below: there are dozens.
    expect(snippets.length).toBeGreaterThan(20);
    expect(snippets.filter((s) => s.mode === 'run').length).toBeGreaterThan(15);
  });

  it('type-check under the strict tsconfig, with oncely/* resolved to the sources', () => {
    const checked = snippets.filter((snippet) => snippet.mode !== 'fragment');
    const errors = typecheckSnippets(checked).map((d) => `${d.where}: TS${d.code}: ${d.message}`);
    if (errors.length > 0)
      throw new Error(`${errors.length} type error(s) in documentation blocks:\n${errors.join('\n')}`);
  }, 120_000);
});
