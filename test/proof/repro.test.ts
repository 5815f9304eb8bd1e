import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { requireService } from '../support/services.js';

// Deterministic reproductions of the violations the HTTP proof (proof/, docs/guarantees.md) found in the
// library, now fixed. Each script exits 0 while the library keeps its promise, and otherwise prints its own
// account of what went wrong.
const run = promisify(execFile);
const script = (name: string) => fileURLToPath(new URL(`../../proof/repro/${name}`, import.meta.url));

async function reproduce(name: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', script(name)], { timeout: 30_000 });
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: Number(failed.code ?? 1), output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

beforeAll(async () => {
  await requireService('postgres');
});

describe('transactional mode keeps its promise when the connection or the lease is lost (proof findings)', () => {
  it('a claim that rolled back at its deadline lets no write of its handler commit (one committed effect per key)', async () => {
    const { code, output } = await reproduce('tx-expired-claim-writes.ts');
    expect(code, output).toBe(0);
  });

  it('no 2xx is sent for an effect whose transaction rolled back (connection terminated before the outcome was stored)', async () => {
    const { code, output } = await reproduce('tx-lost-commit.ts');
    expect(code, output).toBe(0);
  });

  it('an error on a connection the pool just handed out does not crash the process (transactional begin, LISTEN)', async () => {
    const { code, output } = await reproduce('pg-checkout-window.ts');
    expect(code, output).toBe(0);
  });
});
