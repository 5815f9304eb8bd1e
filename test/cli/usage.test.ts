import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeRun, run } from '../package/support/app.js';
import { packedTarball } from '../package/support/packed.js';
import { type CliResult, expectCleanFailure, oncely } from './support/cli.js';

const root = new URL('../../', import.meta.url).pathname;
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
const COMMANDS = ['demo', 'inspect', 'stats', 'purge', 'estimate', 'migrate', 'outbox', 'dashboard'];

// `oncely help <command>`, asked once per command for the two tests that read it: each run of the CLI is a Node
// process (half a second here), and the commands' runs go side by side, not one after the other.
const helps = new Map<string, Promise<CliResult>>();
const helpOf = (command: string): Promise<CliResult> => {
  const known = helps.get(command) ?? oncely(['help', command]);
  helps.set(command, known);
  return known;
};

describe('oncely usage, help and version', () => {
  const scratch: string[] = [];
  afterAll(async () => {
    await Promise.all(scratch.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('with no arguments prints the usage on stderr and exits 2; help and --help exit 0 on stdout', async () => {
    const bare = await oncely([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe('');
    expect(bare.stderr).toMatch(/^oncely: exactly-once/);
    expect(bare.stderr).toMatch(/Usage: oncely <command>/);
    const asked = [['help'], ['--help'], ['-h']];
    for (const [index, help] of (await Promise.all(asked.map((args) => oncely(args)))).entries()) {
      expect(help.code, asked[index]?.join(' ')).toBe(0);
      expect(help.stderr).toBe('');
      expect(help.stdout).toBe(bare.stderr);
    }
  });

  it('help <command> prints that command only; an unknown one is a usage error', async () => {
    const helpsAndFlags = COMMANDS.map((command) =>
      Promise.all([helpOf(command), oncely([command, '--help'])]),
    );
    for (const [index, [help, flag]] of (await Promise.all(helpsAndFlags)).entries()) {
      const command = COMMANDS[index] as string;
      expect(help.code, command).toBe(0);
      expect(help.stdout, command).toMatch(new RegExp(`^oncely ${command} `));
      for (const other of COMMANDS.filter((name) => name !== command))
        expect(help.stdout, `help ${command} shows ${other}`).not.toMatch(
          new RegExp(`^oncely ${other} `, 'm'),
        );
      expect(flag.stdout, `${command} --help`).toBe(help.stdout);
    }
    expectCleanFailure(await oncely(['help', 'nope']), 2, /unknown command "nope"; commands: demo, /);
  });

  it('--version and -v print the version from package.json', async () => {
    for (const flag of ['--version', '-v']) {
      const result = await oncely([flag]);
      expect(result).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
  });

  it('--version works from the packed package installed under node_modules', async () => {
    // The run's tarball, the one the package test installs (packed once: package/support/pack-once.ts).
    const tarball = await packedTarball();
    const dir = mkdtempSync(join(tmpdir(), 'oncely-pack-'));
    scratch.push(dir);
    // The files npm publishes, laid out as npm installs them; dependencies come from this checkout.
    const installed = join(dir, 'node_modules', 'oncely');
    mkdirSync(installed, { recursive: true });
    const unpacked = await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1'], {
      cwd: dir,
    });
    expect(unpacked.code, describeRun(unpacked)).toBe(0);
    symlinkSync(join(root, 'node_modules'), join(installed, 'node_modules'));
    // A version only the installed copy has proves the CLI reads the package.json beside its own dist/.
    const manifest = join(installed, 'package.json');
    writeFileSync(
      manifest,
      readFileSync(manifest, 'utf8').replace(`"version": "${version}"`, '"version": "9.9.9-installed"'),
    );
    const printed = await run(process.execPath, [join(installed, 'dist', 'cli', 'main.js'), '--version'], {
      cwd: dir,
    });
    expect(printed.code, describeRun(printed)).toBe(0);
    expect(printed.stdout).toBe('9.9.9-installed\n');
  });

  it('an unknown option names the flag and the options the command takes, without parseArgs jargon', async () => {
    const unknown = await oncely(['stats', '--bogus']);
    expectCleanFailure(
      unknown,
      2,
      /stats: unknown option --bogus; stats takes --store, --prefix, --schema, --table, --help$/m,
    );
    expect(unknown.stderr).not.toMatch(/positional|'--'/);
    expectCleanFailure(await oncely(['demo', '-x']), 2, /demo: unknown option -x; demo takes --keys, /);
    expectCleanFailure(await oncely(['demo', '--keys']), 2, /demo: --keys needs a value$/m);
    expectCleanFailure(
      await oncely(['demo', '--keys', '--serve']),
      2,
      /demo: --keys needs a value, got the flag "--serve"/,
    );
    expectCleanFailure(await oncely(['demo', '--serve=yes']), 2, /demo: --serve takes no value, got "yes"/);
    expectCleanFailure(await oncely(['stats', 'extra']), 2, /stats: unexpected argument "extra"/);
    expectCleanFailure(await oncely(['--bogus']), 2, /unknown command "--bogus"/);
  });

  it('every option a command takes is in its help text', async () => {
    const refusals = COMMANDS.map((command) =>
      Promise.all([oncely([command, '--no-such-option']), helpOf(command)]),
    );
    for (const [index, [refused, help]] of (await Promise.all(refusals)).entries()) {
      const command = COMMANDS[index] as string;
      const options = /takes (.*)$/m.exec(refused.stderr)?.[1]?.split(', ') ?? [];
      expect(options.length, refused.stderr).toBeGreaterThan(1);
      for (const option of options.filter((o) => o !== '--help'))
        expect(help.stdout, `${command} help mentions ${option}`).toContain(option);
    }
  });
});
