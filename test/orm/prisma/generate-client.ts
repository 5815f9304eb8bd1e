/**
 * @module Vitest global setup: generates the Prisma test client (schema.prisma -> ./generated and the docs test's
 * test/docs/.virtual/generated/prisma, both ignored by git) before any test file imports it, so the Prisma tests
 * and the docs' Prisma blocks work on a fresh clone. Once per run, before the workers start, so no two test files
 * write the folders at once; skipped when both were made from this schema by this Prisma version.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const schemaPath = here('./schema.prisma');
const stampPath = here('./generated/.made-from');
const outputs = [here('./generated/client.ts'), here('../../docs/.virtual/generated/prisma/client.ts')];

export default function generatePrismaClient(): void {
  const require = createRequire(import.meta.url);
  // The CLI's own file (the package's `bin`), run with this Node: no npx, no shell.
  const manifestPath = require.resolve('prisma/package.json');
  const manifest = require(manifestPath) as { version: string; bin: { prisma: string } };
  const cli = join(dirname(manifestPath), manifest.bin.prisma);
  const version = manifest.version;
  const stamp = `prisma ${version}\n${readFileSync(schemaPath, 'utf8')}`;
  const made = outputs.every((output) => existsSync(output));
  if (made && existsSync(stampPath) && readFileSync(stampPath, 'utf8') === stamp) return;
  execFileSync(process.execPath, [cli, 'generate', '--schema', schemaPath], {
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
}

// Run as a script too (`node --import tsx test/orm/prisma/generate-client.ts`), for a type-check before any test.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href)
  generatePrismaClient();
