// Every source file says what room it is: its first comment is an `@module` header (a `/// <reference>` line and
// its explaining comment go below it). Run by `npm run lint`; prints the files without one and exits 1.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

function* sources(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.generated.ts')) yield path;
  }
}

const missing = [...sources('src')].filter(
  (path) => !/^(#![^\n]*\n)?\/\*\*\s*(\n\s*\*)?\s*@module /.test(readFileSync(path, 'utf8')),
);
if (missing.length > 0) {
  console.error(`${missing.length} source files open without an @module header:\n  ${missing.join('\n  ')}`);
  process.exit(1);
}
