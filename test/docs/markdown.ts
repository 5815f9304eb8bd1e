import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: every path this module returns is relative to it, as a reader of the docs sees them. */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * What a marker comment right before a block says about it:
 * - `check` (no marker): type-checked under the repo's strict tsconfig as the only file of a project, as a reader
 *   who pastes it into an empty file compiles it: every name it uses is imported or declared in the block itself;
 * - `run` (`<!-- snippet: run -->`): checked so, then executed against the local services with nothing but what the
 *   block defines (so no `declare const`: a stub with a real value instead);
 * - `fragment` (`<!-- snippet: fragment -->`): an intentional excerpt that cannot compile alone; not compiled. Rare:
 *   a block that can be made whole should be.
 */
export type SnippetMode = 'check' | 'run' | 'fragment';

export interface Snippet {
  /** The Markdown file, relative to the repository root (`docs/stores/redis.md`). */
  readonly file: string;
  /** 1-based line of the block's first line of code: `file:line` points a developer at it. */
  readonly line: number;
  readonly mode: SnippetMode;
  readonly code: string;
}

/** A marker or a fence the extractor could not make sense of: reported as a failure, never ignored. */
export interface MarkdownProblem {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

/** The Markdown the package ships (README.md and docs/**), the set the docs tests cover. */
export function documentationFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(repoRoot, dir), { withFileTypes: true }).flatMap((entry) => {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) return walk(path);
      return entry.name.endsWith('.md') ? [path] : [];
    });
  return ['README.md', ...walk('docs').sort()];
}

const TS_LANGUAGES = new Set(['ts', 'typescript']);
/** Languages whose blocks are not compiled: one that imports oncely must be a ```ts block, or it escapes the check. */
const UNCHECKED_JS = new Set(['js', 'javascript', 'mjs', 'cjs', 'jsx', 'tsx']);
const IMPORTS_ONCELY = /\bfrom\s+['"]oncely(\/[\w-]+)?['"]|\bimport\(\s*['"]oncely/;
const MARKER = /^<!--\s*snippet:\s*(\S+)\s*-->$/;
const MODES = new Set<string>(['run', 'fragment']);

/** A fence opening (or closing) line: indentation, the fence itself, and the info string. */
const FENCE = /^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)/;

export interface ParsedMarkdown {
  readonly snippets: Snippet[];
  readonly problems: MarkdownProblem[];
  /** The lines outside code blocks, for the link check (a link inside a code block is not a link). */
  readonly prose: { readonly line: number; readonly text: string }[];
}

/**
 * Splits one Markdown file into its TypeScript blocks and its prose. A marker comment must sit on the line right
 * before a TypeScript block; one anywhere else, or one with an unknown word, is a problem, so a typo cannot turn a
 * check off silently.
 */
export function parseMarkdown(file: string, text: string): ParsedMarkdown {
  const lines = text.split('\n');
  const snippets: Snippet[] = [];
  const problems: MarkdownProblem[] = [];
  const prose: { line: number; text: string }[] = [];
  let pendingMarker: { mode: string; line: number } | undefined;

  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as string;
    const fence = FENCE.exec(line);
    if (fence === null) {
      const marker = MARKER.exec(line.trim());
      if (pendingMarker !== undefined) {
        problems.push({
          file,
          line: pendingMarker.line,
          message: 'a snippet marker must be on the line right before a ```ts block',
        });
      }
      pendingMarker = undefined;
      if (marker !== null) {
        const mode = marker[1] as string;
        if (!MODES.has(mode))
          problems.push({
            file,
            line: index + 1,
            message: `unknown snippet marker "${mode}" (run, fragment)`,
          });
        else pendingMarker = { mode, line: index + 1 };
      } else {
        prose.push({ line: index + 1, text: line });
      }
      continue;
    }

    // A fenced block: find its end (the same fence character, at least as long, nothing after it).
    const [, indent, opener, info] = fence as unknown as [string, string, string, string];
    const closing = new RegExp(`^ {0,3}${opener[0] === '`' ? '`' : '~'}{${opener.length},}\\s*$`);
    let end = index + 1;
    while (end < lines.length && !closing.test(lines[end] as string)) end++;
    if (end === lines.length) problems.push({ file, line: index + 1, message: 'code block is never closed' });
    const language = info.toLowerCase();
    if (TS_LANGUAGES.has(language)) {
      const body = lines
        .slice(index + 1, end)
        .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l));
      snippets.push({
        file,
        line: index + 2,
        mode: (pendingMarker?.mode as SnippetMode | undefined) ?? 'check',
        code: `${body.join('\n')}\n`,
      });
    } else if (UNCHECKED_JS.has(language) && IMPORTS_ONCELY.test(lines.slice(index + 1, end).join('\n'))) {
      problems.push({
        file,
        line: index + 1,
        message: `a \`\`\`${language} block that uses oncely is never compiled: make it a \`\`\`ts block`,
      });
    } else if (pendingMarker !== undefined) {
      problems.push({
        file,
        line: pendingMarker.line,
        message: `a snippet marker must precede a \`\`\`ts block, not \`\`\`${language}`,
      });
    }
    pendingMarker = undefined;
    index = end;
  }
  if (pendingMarker !== undefined)
    problems.push({ file, line: pendingMarker.line, message: 'a snippet marker at the end of the file' });
  return { snippets, problems, prose };
}

/** Every documentation file, parsed. */
export function parseDocumentation(): Map<string, ParsedMarkdown> {
  return new Map(
    documentationFiles().map((file) => [
      file,
      parseMarkdown(file, readFileSync(join(repoRoot, file), 'utf8')),
    ]),
  );
}
