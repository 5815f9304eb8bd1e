import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { type ParsedMarkdown, repoRoot } from './markdown.js';

/** A link found in the prose of a Markdown file. */
export interface Link {
  readonly file: string;
  readonly line: number;
  readonly target: string;
}

// `[text](target "title")` and `![alt](target)`; the target stops at whitespace or the closing parenthesis.
const INLINE = /!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
// `[label]: target` reference definitions, at the start of a line.
const DEFINITION = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/;
// Inline code spans: a link written inside backticks is text, not a link.
const CODE_SPAN = /(`+)(?:(?!\1).)+?\1/g;

/** Every link in the prose of a parsed file (code blocks and code spans excluded). */
export function linksOf(file: string, parsed: ParsedMarkdown): Link[] {
  return parsed.prose.flatMap(({ line, text }) => {
    const definition = DEFINITION.exec(text);
    if (definition !== null) return [{ file, line, target: definition[1] as string }];
    const plain = text.replace(CODE_SPAN, '');
    return [...plain.matchAll(INLINE)].map((match) => ({ file, line, target: match[1] as string }));
  });
}

/** Where files the package does not ship can be read. */
const REPOSITORY = 'https://github.com/oncely/oncely/blob/main';

/** Links to other sites, and `mailto:`; everything else is a path inside the package. */
const EXTERNAL = /^[a-z][a-z0-9+.-]*:/i;

/**
 * What `npm pack` puts in the tarball: the `files` of package.json, plus what npm always adds (package.json, the
 * README and the LICENSE at the root).
 */
function shippedRoots(): string[] {
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { files?: string[] };
  return [...(manifest.files ?? []), 'package.json', 'README.md', 'LICENSE'];
}

/**
 * Why a link is dead for a reader of the installed package, or undefined when it works: a relative link must
 * name a file that exists and that the package ships (a link into `src/` or `bench/` works on GitHub and nowhere
 * else), and a `#fragment` must name a heading or an `id` of that file.
 */
export function deadLink(link: Link): string | undefined {
  if (EXTERNAL.test(link.target)) return undefined;
  const [rawPath = '', fragment] = link.target.split('#', 2) as [string, string | undefined];
  const path = decodeURIComponent(rawPath);
  const target = path === '' ? link.file : normalize(join(dirname(link.file), path));
  if (target.startsWith('..') || target.startsWith('/'))
    return `${link.target} points outside the repository`;
  const shipped = shippedRoots().some((root) => target === root || target.startsWith(`${root}/`));
  if (!shipped) {
    return (
      `${link.target} resolves to ${target}, which the package does not ship (package.json "files"); ` +
      `link to ${REPOSITORY}/${target} instead`
    );
  }
  const absolute = join(repoRoot, target);
  if (!existsSync(absolute)) return `${link.target} resolves to ${target}, which does not exist`;
  if (fragment !== undefined && fragment !== '' && target.endsWith('.md')) {
    if (!anchorsOf(absolute).has(decodeURIComponent(fragment)))
      return `${link.target}: ${relative(repoRoot, absolute)} has no heading or id "${fragment}"`;
  }
  return undefined;
}

const anchorCache = new Map<string, Set<string>>();

/** The anchors GitHub gives a Markdown file: one per heading (with -1, -2… for repeats) and each `id="…"`. */
export function anchorsOf(absolutePath: string): Set<string> {
  const cached = anchorCache.get(absolutePath);
  if (cached !== undefined) return cached;
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of readFileSync(absolutePath, 'utf8').split('\n')) {
    const fenceMatch = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fenceMatch !== null) {
      const marker = fenceMatch[1] as string;
      if (fence === undefined) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      continue;
    }
    if (fence !== undefined) continue;
    for (const id of line.matchAll(/\bid="([^"]+)"/g)) anchors.add(id[1] as string);
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const slug = githubSlug(heading[1] as string);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  anchorCache.set(absolutePath, anchors);
  return anchors;
}

/**
 * GitHub's heading slug: the text without Markdown links' targets, lower-cased, punctuation dropped (letters,
 * digits, spaces, `-` and `_` stay), each space a hyphen.
 */
export function githubSlug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-');
}
