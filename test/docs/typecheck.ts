// The docs test's type-check: every TypeScript block of README.md and docs/** compiled as the only file of a
// project, as a reader who pastes it into an empty file would compile it.
import { join } from 'node:path';
import ts from 'typescript';
import { repoRoot, type Snippet } from './markdown.js';

/** Where a block lives as a virtual file: inside the repository, so `package.json` makes it ESM (top-level await)
 * and imports of `express`, `pg`, … resolve from node_modules as they would in a user's project. */
const virtualDir = join(repoRoot, 'test/docs/.virtual');

/**
 * Every block becomes a module (`export {}` appended after its last line, so line numbers stay as they are), as a
 * `.ts` file of an ESM package is. The block is the program's only root file: nothing declares `order`, `pool` or
 * `payments` for it, so a name the block uses and does not declare or import is an error, here as in the reader's
 * editor.
 */
const asModule = (code: string) => `${code}\nexport {};\n`;

export interface SnippetDiagnostic {
  /** `README.md:71` (or a repository file when the problem is outside the blocks). */
  readonly where: string;
  readonly code: number;
  readonly message: string;
}

/**
 * True for a block of a Nest app: it compiles as Nest apps do, with legacy decorators (`experimentalDecorators`,
 * `emitDecoratorMetadata`), and runs that way (snippets-run.test.ts). Every other block keeps TypeScript's standard
 * decorators, which `oncely/decorators` documents.
 */
export const isNestApp = (snippet: Snippet) => /from '@nestjs\//.test(snippet.code);

/** The compiler options of the Nest blocks, in a form tsx takes too. */
export const nestTsconfigPath = join(repoRoot, 'test/nestjs/tsconfig.json');

/** The repository's tsconfig (strict, `oncely/*` mapped to the sources by `paths`), for a program with no emit. */
function compilerOptions(): ts.CompilerOptions {
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
  return {
    ...config.options,
    // A Node 20 project's lib, without the repository's DOM: DOM declares globals such as `event`, `name` and
    // `status`, with which a block using a name it never declared would still compile here and not for the reader.
    lib: ['lib.es2023.d.ts'],
    noEmit: true,
    declaration: false,
    sourceMap: false,
  };
}

/**
 * Type-checks each block in a Program of its own, whose only root is the block: one block's declarations (a
 * `declare global`, a module augmentation, a top-level name) can never make another compile. The parsed library and
 * source files are shared between the programs (a cache per set of options), so each program costs a checker, not
 * a parse of the sources and of node_modules' declarations.
 */
export async function typecheckSnippets(snippets: readonly Snippet[]): Promise<SnippetDiagnostic[]> {
  const options = compilerOptions();
  const nestOptions = { ...options, experimentalDecorators: true, emitDecoratorMetadata: true };
  const standard = sharedHost(options);
  const nest = sharedHost(nestOptions);
  const found: SnippetDiagnostic[] = [];
  for (const [index, snippet] of snippets.entries()) {
    found.push(
      ...(isNestApp(snippet)
        ? checkOne(snippet, index, nestOptions, nest)
        : checkOne(snippet, index, options, standard)),
    );
    // Hundreds of blocks are tens of seconds of compiler work: between two, the worker answers Vitest's messages,
    // which time out after 60 s of a blocked event loop on a loaded machine.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return found;
}

interface SharedHost {
  readonly host: ts.CompilerHost;
  /** The block under check: its virtual file name and its text. */
  current: { fileName: string; text: string } | undefined;
}

function sharedHost(options: ts.CompilerOptions): SharedHost {
  const host = ts.createCompilerHost(options, true);
  const shared: SharedHost = { host, current: undefined };
  const cache = new Map<string, ts.SourceFile | undefined>();
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (fileName) => fileName === shared.current?.fileName || fileExists.call(host, fileName);
  host.readFile = (fileName) =>
    fileName === shared.current?.fileName ? shared.current.text : readFile.call(host, fileName);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    const current = shared.current;
    if (fileName === current?.fileName)
      return ts.createSourceFile(fileName, current.text, languageVersion, true);
    const format = typeof languageVersion === 'object' ? languageVersion.impliedNodeFormat : undefined;
    const key = `${format ?? ''}:${fileName}`;
    if (!cache.has(key))
      cache.set(key, getSourceFile.call(host, fileName, languageVersion, onError, shouldCreate));
    return cache.get(key);
  };
  return shared;
}

function checkOne(
  snippet: Snippet,
  index: number,
  options: ts.CompilerOptions,
  shared: SharedHost,
): SnippetDiagnostic[] {
  const fileName = join(virtualDir, `${snippet.file.replaceAll('/', '__')}__L${snippet.line}__${index}.ts`);
  shared.current = { fileName, text: asModule(snippet.code) };
  try {
    const program = ts.createProgram({ rootNames: [fileName], options, host: shared.host });
    const source = program.getSourceFile(fileName);
    if (source === undefined) throw new Error(`${fileName} is not in the program`);
    const diagnostics = [
      ...program.getOptionsDiagnostics(),
      ...program.getGlobalDiagnostics(),
      ...program.getSyntacticDiagnostics(source),
      ...program.getSemanticDiagnostics(source),
    ];
    return diagnostics.map((diagnostic) => describe(diagnostic, fileName, snippet));
  } finally {
    shared.current = undefined;
  }
}

function describe(diagnostic: ts.Diagnostic, fileName: string, snippet: Snippet): SnippetDiagnostic {
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
  const { file, start } = diagnostic;
  if (file === undefined || start === undefined)
    return { where: 'tsconfig.json', code: diagnostic.code, message };
  const { line } = file.getLineAndCharacterOfPosition(start);
  const where =
    file.fileName === fileName
      ? `${snippet.file}:${snippet.line + line}`
      : `${file.fileName.replace(repoRoot, '')}:${line + 1}`;
  return { where, code: diagnostic.code, message };
}
