import { join } from 'node:path';
import ts from 'typescript';
import { repoRoot, type Snippet } from './markdown.js';

/** The ambient declarations of the docs' placeholders (`payments`, `order`, `pool`, …), shared by every block. */
export const preludePath = join(repoRoot, 'test/docs/prelude.ts');

/** Where a block lives as a virtual file: inside the repository, so `package.json` makes it ESM (top-level await)
 * and imports of `express`, `pg`, … resolve from node_modules as they would in a user's project. */
const virtualDir = join(repoRoot, 'test/docs/.virtual');

/**
 * Every block becomes a module (`export {}` appended after its last line, so line numbers stay as they are):
 * without it, a block with no import would be a script, and the top-level names of two such blocks would
 * collide in the global scope.
 */
const asModule = (code: string) => `${code}\nexport {};\n`;

export interface SnippetDiagnostic {
  /** `README.md:71` (or a repository file when the problem is outside the blocks, such as the prelude). */
  readonly where: string;
  readonly code: number;
  readonly message: string;
}

/**
 * True for a block of a Nest app: it compiles as Nest apps do, with legacy decorators (`experimentalDecorators`,
 * `emitDecoratorMetadata`), and runs that way (snippets-run.test.ts). Every other block keeps TypeScript's standard
 * decorators, which `oncely/decorators` documents, so the two kinds are checked in two programs.
 */
export const isNestApp = (snippet: Snippet) => /from '@nestjs\//.test(snippet.code);

/** The compiler options of the Nest blocks, in a form tsx takes too. */
export const nestTsconfigPath = join(repoRoot, 'test/nestjs/tsconfig.json');

/**
 * Type-checks the blocks under the repository's tsconfig (strict, `oncely/*` mapped to the sources by `paths`),
 * in one Program per decorator mode, so the sources and the libraries are checked once, not once per block.
 */
export function typecheckSnippets(snippets: readonly Snippet[]): SnippetDiagnostic[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(repoRoot, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (config === undefined) throw new Error('tsconfig.json could not be read');
  const options: ts.CompilerOptions = {
    ...config.options,
    noEmit: true,
    declaration: false,
    sourceMap: false,
  };
  const nest = snippets.filter(isNestApp);
  return [
    ...checkProgram(
      snippets.filter((snippet) => !isNestApp(snippet)),
      options,
    ),
    ...(nest.length === 0
      ? []
      : checkProgram(nest, { ...options, experimentalDecorators: true, emitDecoratorMetadata: true })),
  ];
}

function checkProgram(snippets: readonly Snippet[], options: ts.CompilerOptions): SnippetDiagnostic[] {
  const virtual = new Map<string, Snippet>();
  snippets.forEach((snippet, index) => {
    const name = `${snippet.file.replaceAll('/', '__')}__L${snippet.line}__${index}.ts`;
    virtual.set(join(virtualDir, name), snippet);
  });

  const host = ts.createCompilerHost(options, true);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (fileName) => virtual.has(fileName) || fileExists.call(host, fileName);
  host.readFile = (fileName) => {
    const snippet = virtual.get(fileName);
    return snippet === undefined ? readFile.call(host, fileName) : asModule(snippet.code);
  };
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    const snippet = virtual.get(fileName);
    if (snippet === undefined)
      return getSourceFile.call(host, fileName, languageVersion, onError, shouldCreate);
    return ts.createSourceFile(fileName, asModule(snippet.code), languageVersion, true);
  };

  const program = ts.createProgram({ rootNames: [...virtual.keys(), preludePath], options, host });
  const diagnostics: ts.Diagnostic[] = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...[...virtual.keys(), preludePath].flatMap((fileName) => {
      const source = program.getSourceFile(fileName);
      if (source === undefined) throw new Error(`${fileName} is not in the program`);
      return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
    }),
  ];
  return diagnostics.map((diagnostic) => describe(diagnostic, virtual));
}

function describe(diagnostic: ts.Diagnostic, virtual: ReadonlyMap<string, Snippet>): SnippetDiagnostic {
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
  const { file, start } = diagnostic;
  if (file === undefined || start === undefined)
    return { where: 'tsconfig.json', code: diagnostic.code, message };
  const { line } = file.getLineAndCharacterOfPosition(start);
  const snippet = virtual.get(file.fileName);
  const where =
    snippet === undefined
      ? `${file.fileName.replace(repoRoot, '')}:${line + 1}`
      : `${snippet.file}:${snippet.line + line}`;
  return { where, code: diagnostic.code, message };
}
