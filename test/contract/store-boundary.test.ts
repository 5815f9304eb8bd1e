/**
 * Test (the store boundary): the dashboard and the CLI read records only through the store inspection interface,
 * so no file of theirs imports a store's private module (anything under src/stores/<store>/ but its index). A new
 * store then needs only to implement `StoreInspector` to get both; its record format stays its own.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');
const TOOLS = ['dashboard', 'cli'];
/** `from '…'`, `import '…'`, `import('…')` and `export … from '…'`: every way a module names another. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The store-private module a specifier names, as a path below src/, or undefined when it names none. */
function storePrivate(file: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = relative(src, resolve(dirname(file), specifier)).replaceAll('\\', '/');
  const inside = /^stores\/[^/]+\/(.+)$/.exec(target);
  if (inside === null) return undefined;
  return /^index\.(js|ts)$/.test(inside[1]!) ? undefined : target;
}

function violations(files: readonly string[]): string[] {
  return files.flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(SPECIFIER)].flatMap(([, specifier]) => {
      const target = storePrivate(file, specifier!);
      return target === undefined ? [] : [`${relative(src, file)} imports ${target}`];
    }),
  );
}

describe('the dashboard and the CLI stay outside the stores', () => {
  it('import no store-private module (only src/stores/<store>/index and src/stores/memory.ts)', () => {
    const files = TOOLS.flatMap((tool) => sources(join(src, tool)));
    expect(files.length).toBeGreaterThan(20);
    expect(violations(files)).toEqual([]);
  });

  it('the check sees every form of import', () => {
    const file = join(src, 'dashboard', 'x.ts');
    expect(storePrivate(file, '../stores/redis/record.js')).toBe('stores/redis/record.js');
    expect(storePrivate(file, '../stores/postgres/sql/get.sql.generated.js')).toBe(
      'stores/postgres/sql/get.sql.generated.js',
    );
    expect(storePrivate(file, '../stores/redis/index.js')).toBeUndefined();
    expect(storePrivate(file, '../stores/memory.js')).toBeUndefined();
    expect(storePrivate(file, '../core/store.js')).toBeUndefined();
    const text = [
      "import { a } from '../stores/redis/keys.js';",
      "import type { B } from '../stores/postgres/rows.js';",
      "export { c } from '../stores/redis/scripts.js';",
      "const { D } = await import('../stores/postgres/store.js');",
    ].join('\n');
    expect([...text.matchAll(SPECIFIER)].map(([, s]) => storePrivate(file, s!))).toEqual([
      'stores/redis/keys.js',
      'stores/postgres/rows.js',
      'stores/redis/scripts.js',
      'stores/postgres/store.js',
    ]);
  });
});
