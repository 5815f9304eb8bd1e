import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, where package.json and dist/ live. */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

export interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The command line, for failure messages. */
  readonly command: string;
}

/**
 * Runs a command to completion and returns its exit code and output; never throws, so a test can show the whole
 * output when it asserts on the code.
 */
export function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<RunResult> {
  const timeout = options.timeoutMs ?? 120_000;
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, env: options.env ?? cleanEnv(), timeout, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        // Stopped at the limit, a command may still exit with a code of its own and no output: say it was stopped.
        const stopped = error?.killed ? `, stopped at the ${timeout} ms limit` : '';
        resolve({
          code,
          stdout,
          stderr,
          command: `${command} ${args.join(' ')} (in ${options.cwd}${stopped})`,
        });
      },
    );
  });
}

/** Formats a result for an assertion message. */
export function describeRun(result: RunResult): string {
  return `${result.command}\nexit ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

/**
 * The environment without what `npm test` adds for the repository (npm_package_*, npm_lifecycle_*, its prefix,
 * which a child npm could take for where to install, and the repository's node_modules/.bin on PATH): a fixture
 * app must see a user's machine, not this repo.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith('npm_package_') || name.startsWith('npm_lifecycle_') || name === 'NODE_PATH')
      continue;
    if (name.startsWith('VITEST') || name === 'NODE_OPTIONS') continue;
    if (name === 'npm_config_prefix' || name === 'npm_config_local_prefix') continue;
    env[name] = value;
  }
  env.PATH = (process.env.PATH ?? '')
    .split(':')
    .filter((entry) => !entry.endsWith('node_modules/.bin'))
    .join(':');
  return { ...env, ...extra };
}

/**
 * The version of a package installed in the repository's node_modules: fixture apps install exactly the versions
 * the rest of the suite tests, which npm's cache already holds.
 */
export function repoVersion(name: string): string {
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}

/** `name@version` pinned to the repository's copy. */
export function pinned(name: string): string {
  return `${name}@${repoVersion(name)}`;
}

/**
 * Throws unless dist/ was built after the last change to src/ and holds nothing that src/ no longer produces.
 * The run's pack (pack-once.ts) packs dist/ as it is (building it there would rewrite files other test files are
 * reading); `npm test` builds first, and a run of the package test alone needs `npm run build` before it.
 */
export function assertDistFresh(): void {
  const src = join(repoRoot, 'src');
  const dist = join(repoRoot, 'dist');
  if (!existsSync(dist)) throw new Error('dist/ is missing: run `npm run build` first (`npm test` does).');
  const problems: string[] = [];
  const sources = new Set<string>();
  for (const file of walk(src)) {
    if (!file.endsWith('.ts') || file.endsWith('.d.ts')) continue;
    const base = relative(src, file).replace(/\.ts$/, '');
    // The dashboard page's sources are bundled into dashboard/ui.generated.ts, not emitted (tsconfig.build.json).
    if (base.startsWith('dashboard/ui/')) continue;
    sources.add(base);
    const built = join(dist, `${base}.js`);
    if (!existsSync(built)) problems.push(`${base}.js is missing`);
    else if (statSync(built).mtimeMs < statSync(file).mtimeMs)
      problems.push(`${base}.js is older than its source`);
  }
  for (const file of walk(dist)) {
    const base = relative(dist, file).replace(/(\.d\.ts|\.js)$/, '');
    if (base.startsWith('examples/')) continue; // built from examples/, not src/
    if (!sources.has(base)) problems.push(`${relative(dist, file)} has no source any more`);
  }
  if (problems.length > 0) {
    throw new Error(
      `dist/ is stale (${problems.slice(0, 5).join('; ')}${problems.length > 5 ? '; …' : ''}): run \`npm run build\` first (\`npm test\` does).`,
    );
  }
}

function* walk(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}

/**
 * Throws if Node could find packages for an app under `dir` anywhere but the app's own node_modules: a
 * node_modules folder in a parent directory, NODE_PATH, or the global folders require() still searches. Any of
 * those could hide a dependency the package forgot to declare.
 */
export function assertIsolated(dir: string): void {
  const leaks: string[] = [];
  for (let parent = dirname(dir); ; parent = dirname(parent)) {
    if (existsSync(join(parent, 'node_modules'))) leaks.push(join(parent, 'node_modules'));
    if (dirname(parent) === parent) break;
  }
  for (const global of ['.node_modules', '.node_libraries']) {
    if (existsSync(join(homedir(), global))) leaks.push(join(homedir(), global));
  }
  if (process.env.NODE_PATH) leaks.push(`NODE_PATH=${process.env.NODE_PATH}`);
  if (leaks.length > 0) {
    throw new Error(`fixture apps under ${dir} could resolve packages from outside: ${leaks.join(', ')}`);
  }
}

/** How long one `npm install` of an app may take. */
export const INSTALL_TIMEOUT_MS = 300_000;

/**
 * Creates `dir` as a fresh app and `npm install`s the given specs into it, from npm's cache when it has them.
 * Rejects with npm's output when the install fails.
 */
export async function installApp(dir: string, specs: readonly string[]): Promise<void> {
  mkdirSync(dir, { recursive: true });
  // TypeORM declares ioredis ^5 as an optional peer, which npm holds against ioredis 6 beside it (ERESOLVE): what
  // docs/orm/typeorm.md tells its users to add.
  const overrides = { typeorm: { ioredis: '^6' } };
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: 'fixture-app', private: true, overrides }, null, 2)}\n`,
  );
  const result = await run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...specs],
    // The app with every peer installs over a hundred packages: past 120 s on two loaded cores.
    { cwd: dir, timeoutMs: INSTALL_TIMEOUT_MS },
  );
  if (result.code !== 0) throw new Error(`npm install into ${dir} failed:\n${describeRun(result)}`);
}

/**
 * Makes `dir` an app whose node_modules holds what `npm install oncely` put into `bare` (oncely and its own
 * dependencies, nothing else) plus the given peers taken from `full`: what `npm install oncely <peers>` gives, for
 * a few milliseconds instead of one npm install per peer group. oncely is copied, not linked, so that Node
 * resolves its imports from this node_modules only (a link would resolve from `bare`'s real path); the other
 * entries are links, whose own dependencies resolve where npm installed them.
 */
export function linkApp(dir: string, bare: string, full: string, peers: readonly string[]): void {
  const modules = join(dir, 'node_modules');
  mkdirSync(modules, { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: 'fixture-app', private: true }, null, 2)}\n`,
  );
  const installed = (root: string) =>
    readdirSync(join(root, 'node_modules')).flatMap((entry) =>
      entry.startsWith('.')
        ? []
        : entry.startsWith('@')
          ? readdirSync(join(root, 'node_modules', entry)).map((name) => `${entry}/${name}`)
          : [entry],
    );
  const link = (from: string, name: string) => {
    mkdirSync(dirname(join(modules, name)), { recursive: true });
    symlinkSync(join(from, 'node_modules', name), join(modules, name), 'dir');
  };
  for (const name of installed(bare)) {
    if (name === 'oncely')
      cpSync(join(bare, 'node_modules/oncely'), join(modules, 'oncely'), { recursive: true });
    else link(bare, name);
  }
  for (const peer of peers) link(full, peer);
}
