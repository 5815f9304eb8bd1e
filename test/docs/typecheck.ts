// The docs test's type-check: every TypeScript block of README.md and docs/** compiled as the only file of a
// project, as a reader who pastes it into an empty file would compile it.
import { join } from 'node:path';
import ts from 'typescript';
import { repoRoot, type Snippet } from './markdown.js';
import { type Block, groupBlocks } from './typecheck-groups.js';
import { sharedHost } from './typecheck-host.js';

/** Where a block lives as a virtual file: inside the repository, so `package.json` makes it ESM (top-level await)
 * and imports of `express`, `pg`, … resolve from node_modules as they would in a user's project. */
const virtualDir = join(repoRoot, 'test/docs/.virtual');

/**
 * Every block becomes a module (`export {}` appended after its last line, so line numbers stay as they are), as a
 * `.ts` file of an ESM package is. The block is compiled as the only root file of its program would be: nothing
 * declares `order`, `pool` or `payments` for it, so a name the block uses and does not declare or import is an
 * error, here as in the reader's editor.
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
 * Type-checks each block as if it were the only root of its program, as in a reader's empty project: one block's
 * declarations (a `declare global`, a module augmentation, a top-level name) never make another compile. Blocks
 * that would see the same global scope alone share one program and its checker (typecheck-groups.ts says why each
 * still gets the diagnostics of a program of its own), and every program reuses the parsed files and module
 * resolutions of the ones before (typecheck-host.ts): a checker per group, not a parse and a checker per block.
 */
export async function typecheckSnippets(snippets: readonly Snippet[]): Promise<SnippetDiagnostic[]> {
  const options = compilerOptions();
  const nestOptions = { ...options, experimentalDecorators: true, emitDecoratorMetadata: true };
  const blocks = snippets.map((snippet, order): Block => {
    const fileName = join(virtualDir, `${snippet.file.replaceAll('/', '__')}__L${snippet.line}__${order}.ts`);
    const blockOptions = isNestApp(snippet) ? nestOptions : options;
    return { snippet, fileName, text: asModule(snippet.code), options: blockOptions, order };
  });
  const found: (SnippetDiagnostic & { order: number })[] = [];
  for (const group of await groupBlocks(blocks, sharedHost)) {
    found.push(...checkGroup(group));
    // Hundreds of blocks are tens of seconds of compiler work: between two groups, the worker answers Vitest's
    // messages, which time out after 60 s of a blocked event loop on a loaded machine.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return found.sort((a, b) => a.order - b.order).map(({ order: _, ...diagnostic }) => diagnostic);
}

/** The diagnostics of each block of a group, from one program whose roots are the group's blocks. */
function checkGroup(group: readonly Block[]): (SnippetDiagnostic & { order: number })[] {
  const [first] = group;
  if (first === undefined) return [];
  const { host, virtual } = sharedHost(first.options);
  for (const block of group) virtual.set(block.fileName, block.text);
  try {
    const program = ts.createProgram({
      rootNames: group.map((block) => block.fileName),
      options: first.options,
      host,
    });
    // Options and global diagnostics belong to the program: reported once, with its first block.
    const global = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()].map(
      (diagnostic) => ({
        ...describe(diagnostic, first.fileName, first.snippet),
        order: first.order,
      }),
    );
    return [
      ...global,
      ...group.flatMap((block) => {
        const source = program.getSourceFile(block.fileName);
        if (source === undefined) throw new Error(`${block.fileName} is not in the program`);
        return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map(
          (diagnostic) => ({ ...describe(diagnostic, block.fileName, block.snippet), order: block.order }),
        );
      }),
    ];
  } finally {
    for (const block of group) virtual.delete(block.fileName);
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
