/**
 * @module Which documentation blocks the docs type-check may check in one program. In a program, a module sees
 * another file only through what it imports, unless that file widens the scope every file shares: a script (its
 * declarations are global: the libs, @types/node, a package's global typings), or a module with a `declare global`,
 * a `declare module '…'` augmentation or an `export as namespace`. So blocks whose programs alone would hold the same
 * such files see the same global scope and the same modules: checked together, each gets the diagnostics it would
 * get alone, for one checker instead of one each. A block that widens the scope itself is checked alone.
 */
import ts from 'typescript';
import type { Snippet } from './markdown.js';
import type { SharedHost } from './typecheck-host.js';

/** A block as the type-check compiles it: a virtual file under the options of its kind. */
export interface Block {
  readonly snippet: Snippet;
  readonly fileName: string;
  /** The block's code as compiled (a module). */
  readonly text: string;
  readonly options: ts.CompilerOptions;
  /** Its place in the list checked, for reporting in that order. */
  readonly order: number;
}

/**
 * The blocks in groups to check together, in the order of their first block. Each block's program alone is made
 * (no checker: the files it loads and how they resolve, from the shared host's caches) to learn which files widen its
 * scope; blocks with the same options and the same such files form a group.
 */
export async function groupBlocks(
  blocks: readonly Block[],
  hostFor: (options: ts.CompilerOptions) => SharedHost,
): Promise<Block[][]> {
  const groups = new Map<string, Block[]>();
  for (const block of blocks) {
    const key = `${JSON.stringify(block.options)}\n${scopeOf(block, hostFor(block.options))}`;
    groups.set(key, [...(groups.get(key) ?? []), block]);
    // Each program is synchronous compiler work: the worker answers Vitest's messages in between.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return [...groups.values()];
}

/** The files that widen the scope of `block`'s program alone, or a key of its own when the block widens it. */
function scopeOf(block: Block, { host, virtual }: SharedHost): string {
  virtual.set(block.fileName, block.text);
  try {
    const program = ts.createProgram({ rootNames: [block.fileName], options: block.options, host });
    const root = program.getSourceFile(block.fileName);
    if (root === undefined) throw new Error(`${block.fileName} is not in the program`);
    if (widensScope(root)) return `alone: ${block.fileName}`;
    return program
      .getSourceFiles()
      .filter((file) => file !== root && widensScope(file))
      .map((file) => file.fileName)
      .sort()
      .join('\n');
  } finally {
    virtual.delete(block.fileName);
  }
}

/** True when `file` declares anything outside its own module scope. */
export function widensScope(file: ts.SourceFile): boolean {
  if (!ts.isExternalModule(file)) return true;
  return file.statements.some(
    (statement) =>
      ts.isNamespaceExportDeclaration(statement) ||
      (ts.isModuleDeclaration(statement) &&
        (ts.isStringLiteral(statement.name) || (statement.flags & ts.NodeFlags.GlobalAugmentation) !== 0)),
  );
}
