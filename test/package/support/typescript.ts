import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './app.js';

/**
 * The compilers a consumer is checked with: the repository's TypeScript (5.9) and the current major, installed as
 * the devDependency alias `typescript-next` (7.x, the native port: its `tsc` runs a Go binary from an optional
 * platform package). `major` guards against a silent swap of either.
 */
export const compilers = [
  { name: 'TypeScript 5.9', tsc: join(repoRoot, 'node_modules/typescript/bin/tsc'), major: 5 },
  { name: 'TypeScript 7', tsc: join(repoRoot, 'node_modules/typescript-next/bin/tsc'), major: 7 },
] as const;

export type Compiler = (typeof compilers)[number];

/** The module settings a consumer may use; the package's types must resolve under each. */
export const resolutions = {
  node16: { module: 'node16', moduleResolution: 'node16' },
  nodenext: { module: 'nodenext', moduleResolution: 'nodenext' },
  bundler: { module: 'esnext', moduleResolution: 'bundler' },
} as const;

export type Resolution = keyof typeof resolutions;

/**
 * Writes `tsconfig.<name>.json` into the app and returns its path. Strict, no emit, and `skipLibCheck: false`: the
 * declarations of oncely and of everything they pull in are checked, not only the consumer's file.
 */
export function writeTsconfig(
  app: string,
  name: string,
  files: readonly string[],
  options: Record<string, unknown>,
): string {
  const path = join(app, `tsconfig.${name}.json`);
  const compilerOptions = { strict: true, noEmit: true, skipLibCheck: false, target: 'ES2022', ...options };
  writeFileSync(path, `${JSON.stringify({ compilerOptions, files }, null, 2)}\n`);
  return path;
}
