import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseDuration, storedBodyBytes } from '../../src/cli/commands/estimate.js';

const run = promisify(execFile);
const cli = new URL('../../dist/cli/main.js', import.meta.url).pathname;

describe('oncely estimate', () => {
  it('multiplies rate by retention and sizes compressed bodies', async () => {
    const { stdout } = await run(process.execPath, [
      cli,
      'estimate',
      '--rps',
      '10',
      '--retention',
      '1h',
      '--body-bytes',
      '200',
    ]);
    expect(stdout).toMatch(/redis\s+36000\s+200\s+437/);
    expect(storedBodyBytes(500)).toBe(500);
    const tenKiB = storedBodyBytes(10 * 1024);
    expect(tenKiB).toBeLessThan((10 * 1024) / 2);
    expect(tenKiB).toBeGreaterThan((10 * 1024) / 10);
  });

  it('parses durations and rejects nonsense with exit code 2', async () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('7d')).toBe(604_800_000);
    const failure = await run(process.execPath, [
      cli,
      'estimate',
      '--rps',
      '5',
      '--retention',
      'a while',
    ]).catch((e: { code: number; stderr: string }) => e);
    expect(failure).toMatchObject({ code: 2 });
    expect((failure as { stderr: string }).stderr).toMatch(/--retention must look like/);
  });
});
