// Replaces one marked section of docs/benchmarks.md with freshly measured Markdown, so every runner owns its
// own section and a re-run leaves the others untouched.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../docs/benchmarks.md', import.meta.url);

export function writeSection(name, markdown) {
  const text = readFileSync(file, 'utf8');
  const start = `<!-- section:${name}:start -->`;
  const end = `<!-- section:${name}:end -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from === -1 || to === -1) throw new Error(`docs/benchmarks.md has no section "${name}"`);
  writeFileSync(file, `${text.slice(0, from + start.length)}\n${markdown.trim()}\n${text.slice(to)}`);
}
