import { describe, expect, it } from 'vitest';
import { deadLink, githubSlug, linksOf } from './links.js';
import { parseMarkdown } from './markdown.js';

/** The extractor and the link rules themselves: if they went blind, the docs tests would pass on anything. */
describe('the docs extractor', () => {
  const page = [
    '# Title', //                              1
    '', //                                     2
    '```ts', //                                3
    "const a: number = 'x';", //               4
    '```', //                                  5
    '<!-- snippet: run -->', //                6
    '```typescript', //                        7
    'const b = 1;', //                         8
    '```', //                                  9
    'See [the store](stores/redis.md#client-options) and `[not](a-link.md)`.', // 10
    '```sh', //                                11
    'echo "[no](link.md)"', //                 12
    '```', //                                  13
  ].join('\n');

  it('finds ts and typescript blocks, their first line and their marker', () => {
    const { snippets, problems } = parseMarkdown('docs/page.md', page);
    expect(problems).toEqual([]);
    expect(snippets).toEqual([
      { file: 'docs/page.md', line: 4, mode: 'check', code: "const a: number = 'x';\n" },
      { file: 'docs/page.md', line: 8, mode: 'run', code: 'const b = 1;\n' },
    ]);
  });

  it('reports a misspelled marker, and a marker that is not right before a ts block', () => {
    const { problems } = parseMarkdown(
      'x.md',
      ['<!-- snippet: runn -->', '```ts', '1', '```', '<!-- snippet: run -->', '', '```ts', '2', '```'].join(
        '\n',
      ),
    );
    expect(problems.map((p) => p.line)).toEqual([1, 5]);
  });

  it('takes links from prose only, not from code spans or code blocks', () => {
    const links = linksOf('docs/page.md', parseMarkdown('docs/page.md', page));
    expect(links).toEqual([{ file: 'docs/page.md', line: 10, target: 'stores/redis.md#client-options' }]);
  });

  it('accepts shipped files and real anchors; refuses unshipped, missing files and unknown anchors', () => {
    const at = (target: string) => deadLink({ file: 'docs/stores/postgres.md', line: 1, target });
    expect(at('../http.md#options-every-adapter')).toBeUndefined();
    expect(at('redis.md#node-redis')).toBeUndefined();
    expect(at('../../README.md')).toBeUndefined();
    expect(at('https://example.com/x')).toBeUndefined();
    expect(at('../../src/stores/postgres/sql/begin.sql')).toMatch(/does not ship/);
    expect(at('../../bench/http/chart.svg')).toMatch(/does not ship/);
    expect(at('missing.md')).toMatch(/does not exist/);
    expect(at('../http.md#no-such-heading')).toMatch(/no heading or id/);
    expect(at('../../../elsewhere.md')).toMatch(/outside the repository/);
  });

  it('slugs headings as GitHub does', () => {
    expect(githubSlug('`new Inbox(handler, options)` and `inbox.handle(message, { redelivered })`')).toBe(
      'new-inboxhandler-options-and-inboxhandlemessage--redelivered-',
    );
    expect(githubSlug('Options (every adapter)')).toBe('options-every-adapter');
  });
});
