/**
 * @module Vitest global setup: packs the repository once per run (`npm pack`, as `npm publish` would, from the built
 * dist/) for every test file that installs or unpacks the package (packed.ts hands them the tarball). The pack runs
 * in the background while the workers start, and only when a queued file asks for it (calls `packedTarball(`):
 * a run of unit tests neither waits for it nor fails on a dist/ that is older than src/.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { assertDistFresh, describeRun, repoRoot, run } from './app.js';
import type { Packed } from './packed.js';

/** What a test file says when it needs the tarball: it calls the helper of packed.ts. */
const ASKS = /\bpackedTarball\(/;

export default async function packOnce(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (!queuedFilesAsk(project)) return undefined;
  const dir = await mkdtemp(join(tmpdir(), 'oncely-tarball-'));
  // Not awaited here: the workers start at once, and the first file that needs the tarball waits for it then.
  // Awaiting would put the pack (seconds of npm on a loaded machine) in front of every test file of the run.
  const packed = pack(dir);
  // The answer crosses to the workers (other processes) over a local socket: a request waits for the pack to end.
  const server = createServer((_request, response) => {
    void packed.then((answer) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  project.provide('packedTarball', `http://127.0.0.1:${port}/`);
  return async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await packed; // npm writes into dir until it ends
    await rm(dir, { recursive: true, force: true });
  };
}

/**
 * True when a file of this run calls `packedTarball(`. The run's files are the paths Vitest collected before it
 * called this setup; without them (an API this Vitest lacks), it packs, as a run of every file would.
 */
function queuedFilesAsk(project: TestProject): boolean {
  let paths: string[];
  try {
    paths = project.vitest.state.getPaths();
  } catch {
    return true;
  }
  if (paths.length === 0) return true;
  return paths.some((path) => ASKS.test(readFileSync(path, 'utf8')));
}

/**
 * Packs the repository into `dir` (without the prepack build: dist/ is checked fresh instead, since building here
 * would rewrite files other test files are reading). Never rejects: a stale dist/ or a failed pack is the answer
 * the tests that asked for the tarball fail with, and the rest of the run goes on.
 */
async function pack(dir: string): Promise<Packed> {
  try {
    assertDistFresh();
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
  // Asynchronous, never a synchronous child: npm pack can take tens of seconds on a loaded machine.
  const result = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
    cwd: repoRoot,
  });
  if (result.code !== 0) return { error: `npm pack failed:\n${describeRun(result)}` };
  const [made] = JSON.parse(result.stdout) as [{ filename: string }];
  return { path: join(dir, made.filename) };
}
