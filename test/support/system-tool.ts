import { execFileSync } from 'node:child_process';

/**
 * Whether a system tool that npm cannot install is on this machine. Outside CI a missing tool skips the tests
 * that need it, with the reason and the install command printed; under `CI=true` it fails them instead, so CI
 * always runs every case (`.ci/run` installs the tool first).
 */
export function systemTool(name: string, probe: readonly string[], install: string): boolean {
  try {
    execFileSync(probe[0] as string, probe.slice(1), { stdio: 'ignore' });
    return true;
  } catch {
    const message = `${name} is not installed, so its tests cannot run. Install it with:\n  ${install}`;
    if (process.env.CI === 'true') throw new Error(`${message}\n(CI=true: every case must run.)`);
    process.stderr.write(`\n[skipped] ${message}\n(CI=true makes this a failure; .ci/run installs it.)\n\n`);
    return false;
  }
}
