import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// oncely/client runs in browsers, Deno, Bun and workers too: only web APIs, and no dependency but uuid (whose
// default build uses web crypto). Both checks below fail on the first `node:` import or Node global.

const root = fileURLToPath(new URL('../../', import.meta.url));
const entry = join(root, 'src/client/index.ts');

/** Every source file the entry reaches through relative imports, and the packages it imports. */
function importGraph(start: string): { files: string[]; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022);
    for (const statement of source.statements) {
      const specifier =
        (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
        statement.moduleSpecifier !== undefined &&
        ts.isStringLiteral(statement.moduleSpecifier)
          ? statement.moduleSpecifier.text
          : undefined;
      if (specifier === undefined) continue;
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
      else packages.add(specifier);
    }
  };
  visit(start);
  return { files: [...files].map((file) => relative(root, file)).sort(), packages };
}

describe('oncely/client uses web APIs only', () => {
  it('imports nothing from node: and no package but uuid', () => {
    const { files, packages } = importGraph(entry);
    expect(files).toContain('src/client/client.ts');
    expect([...packages]).toEqual(['uuid']);
  });

  it('type-checks with the DOM library and without Node types', () => {
    const program = ts.createProgram([entry], {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
      types: [],
    });
    const errors = ts
      .getPreEmitDiagnostics(program)
      .map(
        (d) =>
          `${d.file ? relative(root, d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`,
      );
    expect(errors).toEqual([]);
  }, 60_000);
});
