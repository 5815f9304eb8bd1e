import { describe, expect, it } from 'vitest';
import { deadLink, linksOf } from './links.js';
import { parseDocumentation } from './markdown.js';

// The project's internal design and style notes are not in the package: a page that cites them sends the reader
// to a document they do not have.
const INTERNAL_CITATION = /\b(?:DESIGN|STYLE)(?:\.md|\s*§)/;

/**
 * README.md and docs/** ship in the package (package.json "files") and are read from node_modules or npm's page as
 * well as on GitHub: every relative link must reach a file the package ships, and every #fragment a heading or id
 * of that file.
 */
describe('documentation links', () => {
  const links = [...parseDocumentation()].flatMap(([file, parsed]) => linksOf(file, parsed));

  it('are found', () => {
    // A link parser that stopped matching would pass the check below: the docs hold over a hundred links.
    expect(links.length).toBeGreaterThan(100);
  });

  it('reach a file the package ships, and an anchor that exists', () => {
    const dead = links.flatMap((link) => {
      const why = deadLink(link);
      return why === undefined ? [] : [`${link.file}:${link.line}: ${why}`];
    });
    if (dead.length > 0)
      throw new Error(`${dead.length} dead link(s) in the documentation:\n${dead.join('\n')}`);
  });

  it('stand on their own: no citation of the internal DESIGN.md or STYLE.md', () => {
    const citations = [...parseDocumentation()].flatMap(([file, parsed]) =>
      parsed.prose
        .filter(({ text }) => INTERNAL_CITATION.test(text))
        .map(({ line, text }) => `${file}:${line}: ${text}`),
    );
    expect(citations).toEqual([]);
  });
});
