/**
 * @module Vitest global setup: generates the Prisma test clients before any test file imports them, so the Prisma
 * tests and the docs' Prisma blocks work on a fresh clone: schema.prisma -> ./generated and the docs test's
 * test/docs/.virtual/generated/prisma; mysql.prisma -> ./generated/mysql and test/docs/.virtual/generated/prisma-mysql
 * (all ignored by git). Once per run, before the workers start, so no two test files write the folders at once;
 * each skipped when it was made from its schema by this Prisma version.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

interface Client {
  readonly schema: string;
  /** Where its `client.ts` files land (one per generator), and the folder its stamp goes in. */
  readonly outputs: readonly string[];
  readonly folder: string;
}

// PostgreSQL's first: its generation empties ./generated, MySQL's folder inside it too, so MySQL's comes after.
const POSTGRES: Client = {
  schema: here('./schema.prisma'),
  outputs: [here('./generated/client.ts'), here('../../docs/.virtual/generated/prisma/client.ts')],
  folder: here('./generated'),
};
const MYSQL: Client = {
  schema: here('./mysql.prisma'),
  outputs: [
    here('./generated/mysql/client.ts'),
    here('../../docs/.virtual/generated/prisma-mysql/client.ts'),
  ],
  folder: here('./generated/mysql'),
};

export default function generatePrismaClient(): void {
  const require = createRequire(import.meta.url);
  // The CLI's own file (the package's `bin`), run with this Node: no npx, no shell.
  const manifestPath = require.resolve('prisma/package.json');
  const manifest = require(manifestPath) as { version: string; bin: { prisma: string } };
  const cli = join(dirname(manifestPath), manifest.bin.prisma);
  const madePostgres = generate(cli, manifest.version, POSTGRES, false);
  generate(cli, manifest.version, MYSQL, madePostgres);
}

/** Generates `client` unless it was made from its schema by this version (or `force`); true when it generated. */
function generate(cli: string, version: string, client: Client, force: boolean): boolean {
  const stampPath = join(client.folder, '.made-from');
  const stamp = `prisma ${version}\n${readFileSync(client.schema, 'utf8')}`;
  const made = client.outputs.every((output) => existsSync(output));
  if (!force && made && existsSync(stampPath) && readFileSync(stampPath, 'utf8') === stamp) return false;
  // MySQL's folder, emptied by PostgreSQL's generation, keeps empty folders in which Prisma refuses to generate.
  if (client === MYSQL) rmSync(client.folder, { recursive: true, force: true });
  execFileSync(process.execPath, [cli, 'generate', '--schema', client.schema], {
    // Quiet when it works; a failure's error carries the CLI's stderr.
    stdio: 'pipe',
    env: {
      ...process.env,
      // `prisma generate` never runs the schema engine, but the CLI downloads it first when it has none cached
      // (binaries.prisma.sh), which fails offline. Any existing file passes its check: this Node binary does.
      PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath,
      PRISMA_HIDE_UPDATE_MESSAGE: '1',
    },
  });
  writeFileSync(stampPath, stamp);
  return true;
}

// Run as a script too (`node --import tsx test/orm/prisma/generate-client.ts`), for a type-check before any test.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href)
  generatePrismaClient();
