import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/**
 * Whether the browser tests can run: Debian's Chromium at /usr/bin/chromium. Outside CI a missing one skips them
 * with the reason and the install command; under CI=true it fails them (.ci/run installs it).
 */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  const message = `Chromium is not installed at ${CHROMIUM}, so the dashboard's browser tests cannot run. Install it with:\n  apt-get install -y chromium`;
  if (process.env.CI === 'true') throw new Error(`${message}\n(CI=true: every case must run.)`);
  process.stderr.write(`\n[skipped] ${message}\n(CI=true makes this a failure; .ci/run installs it.)\n\n`);
  return false;
}

export interface Browser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Headless Chromium with a fresh profile, nothing reaching out (no updates, sync or QUIC): pages on 127.0.0.1 only.
 * `httpCredentials` answers HTTP Basic challenges as a user typing them into the browser's prompt would.
 */
export async function launch(
  options: { httpCredentials?: { username: string; password: string } } = {},
): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'oncely-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    ...options,
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
