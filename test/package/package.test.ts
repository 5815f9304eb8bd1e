import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireService, services } from '../support/services.js';
import {
  assertIsolated,
  describeRun,
  INSTALL_TIMEOUT_MS,
  installApp,
  linkApp,
  pinned,
  type RunResult,
  repoRoot,
  run,
} from './support/app.js';
import { installNode24 } from './support/node24.js';
import { packedTarball } from './support/packed.js';
import {
  DOC_EXTRAS,
  OTHER_REDIS_CLIENTS,
  peerGroups,
  SUBPATH_PEERS,
  TYPE_PACKAGES,
} from './support/subpaths.js';
import { compilers, type Resolution, resolutions, writeTsconfig } from './support/typescript.js';

// What a user gets from npm: the tarball `npm pack` makes from the built dist/ (once per run, for every file that
// needs it: support/pack-once.ts), installed into fresh apps outside the repository, then loaded, served,
// type-checked and inspected by attw. The apps, made once per run in beforeAll and reused by every test:
// - only-oncely: `npm install <tarball>` and nothing else (oncely's own dependencies are all it gets);
// - only-<peer>: that install plus the peers one subpath's docs name (linkApp, no npm run per group);
// - full: the tarball, every peer, the packages the docs use around them and the peers' @types, for the runtime
//   smoke runs on Node 20 and 24 (ESM and require) and the TypeScript consumers;
// - node24: the Node 24 binary from npm (support/node24.ts says why it is not a devDependency).

const fixtures = join(repoRoot, 'test/package/fixtures');
const subpaths = Object.keys(SUBPATH_PEERS);
const groups = peerGroups();

let root: string;
let tarball: string;
let full: string;
let node24: string;
const groupApp = (peers: readonly string[]) =>
  join(root, `only-${peers.join('+').replace(/[@/]/g, '_') || 'oncely'}`);

function copyFixtures(app: string, names: readonly string[]): void {
  for (const name of names) copyFileSync(join(fixtures, name), join(app, name));
}

function expectSuccess(result: RunResult): void {
  expect(result.code, describeRun(result)).toBe(0);
}

beforeAll(async () => {
  await requireService('redis');
  await requireService('postgres');
  root = mkdtempSync(join(tmpdir(), 'oncely-package-'));
  assertIsolated(root);
  full = join(root, 'full');
  const peers = [...new Set(Object.values(SUBPATH_PEERS).flat())];
  const bare = groupApp([]);
  // Node 24 needs no tarball: its install starts while the run's pack may still be going.
  [node24, tarball] = await Promise.all([
    installNode24(join(root, 'node24')),
    packedTarball().then(async (packed) => {
      await Promise.all([
        installApp(full, [
          packed,
          ...[...peers, ...OTHER_REDIS_CLIENTS, ...DOC_EXTRAS, ...TYPE_PACKAGES].map(pinned),
        ]),
        installApp(bare, [packed]),
      ]);
      return packed;
    }),
  ]);
  for (const group of groups)
    if (group.peers.length > 0) linkApp(groupApp(group.peers), bare, full, group.peers);
  copyFixtures(
    full,
    readdirSync(fixtures).filter((name) => !name.startsWith('imports.')),
  );
  for (const { peers } of groups) copyFixtures(groupApp(peers), ['imports.mjs', 'imports.cjs']);
  for (const client of OTHER_REDIS_CLIENTS) {
    linkApp(groupApp([client]), bare, full, [client]);
    copyFixtures(groupApp([client]), ['redis-client.mjs']);
  }
}, INSTALL_TIMEOUT_MS + 120_000);

// Tens of thousands of files (every app's node_modules, the Node 24 binary): removed off the event loop, since a
// synchronous removal on a loaded machine held this worker past Vitest's 60 s hook and report timeouts.
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe('package.json', () => {
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    exports: Record<string, unknown>;
    peerDependencies: Record<string, string>;
    peerDependenciesMeta: Record<string, { optional?: boolean }>;
  };

  it('every export is a subpath of the peer table, and every peer named there is an optional peer', () => {
    const exported = Object.keys(manifest.exports)
      .filter((path) => path !== './package.json')
      .map((path) => (path === '.' ? 'oncely' : `oncely/${path.slice(2)}`));
    expect(exported.sort()).toEqual([...subpaths].sort());
    for (const peer of new Set(Object.values(SUBPATH_PEERS).flat())) {
      expect(manifest.peerDependencies[peer], `${peer} in peerDependencies`).toBeDefined();
      expect(manifest.peerDependenciesMeta[peer]?.optional, `${peer} optional`).toBe(true);
    }
  });

  it('the tarball holds dist (no source maps), docs (pages and their screenshots), README, LICENSE and package.json only', async () => {
    const listing = await run('tar', ['-tzf', tarball], { cwd: root });
    expectSuccess(listing);
    const files = listing.stdout.trim().split('\n');
    const strays = files.filter(
      (file) =>
        !/^package\/(dist\/.+\.(js|d\.ts)|docs\/.+\.(md|png)|README\.md|LICENSE|package\.json)$/.test(file),
    );
    expect(strays).toEqual([]);
    expect(files).toContain('package/dist/cli/main.js');
    expect(files).toContain('package/dist/examples/payments/server.js'); // the CLI demo serves it
    expect(files.filter((file) => /sourceMappingURL|\.test\.|\/test\//.test(file))).toEqual([]);
  });
});

describe('each subpath with only the peers its docs name', () => {
  it.each(groups.map((group) => [group.subpaths.join(', '), group] as const))(
    '%s: import and require',
    async (_name, { peers, subpaths: names }) => {
      for (const script of ['imports.mjs', 'imports.cjs']) {
        const result = await run(process.execPath, [script, ...names], { cwd: groupApp(peers) });
        expectSuccess(result);
        const verdicts = JSON.parse(result.stdout) as Record<string, { ok: boolean }>;
        for (const name of names)
          expect(verdicts[name], `${script} ${name}: ${result.stdout}`).toMatchObject({ ok: true });
      }
    },
  );

  it('with no peer at all, a subpath loads or fails only for want of a peer its docs name', async () => {
    const bare = groupApp([]);
    const result = await run(process.execPath, ['imports.mjs', ...subpaths], { cwd: bare });
    expectSuccess(result);
    const verdicts = JSON.parse(result.stdout) as Record<string, { ok: boolean; message?: string }>;
    for (const name of subpaths) {
      const verdict = verdicts[name];
      if (SUBPATH_PEERS[name]?.length === 0) expect(verdict, name).toMatchObject({ ok: true });
      if (verdict?.ok) continue;
      const missing = /Cannot find (?:package|module) '([^']+)'/.exec(verdict?.message ?? '')?.[1];
      expect(SUBPATH_PEERS[name], `${name} failed with: ${verdict?.message}`).toContain(missing);
    }
  });
});

describe('oncely/redis on each other client its page names, with no ioredis installed', () => {
  it.each(OTHER_REDIS_CLIENTS)('%s: runs once, replays, and the record has a TTL', async (client) => {
    const env = JSON.stringify({ tag: `${process.pid}`, redisUrl: services.redis.url });
    const result = await run(process.execPath, ['redis-client.mjs', client, env], {
      cwd: groupApp([client]),
    });
    expectSuccess(result);
    expect(JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}')).toMatchObject({ client, runs: 1 });
  });
});

describe('every adapter and store serves real requests from the installed package', () => {
  const env = (tag: string) =>
    JSON.stringify({ tag, redisUrl: services.redis.url, databaseUrl: services.postgres.url });
  const runtimes = [
    ['Node 20', () => process.execPath, /^v20\./],
    ['Node 24', () => node24, /^v24\./],
  ] as const;
  const cases = runtimes.flatMap(([runtime, binary, version]) =>
    (['esm', 'cjs'] as const).map((format) => [runtime, format, binary, version] as const),
  );

  it.each(cases)('%s, %s', async (runtime, format, binary, version) => {
    const script = format === 'esm' ? 'smoke-esm.mjs' : 'smoke-cjs.cjs';
    const tag = `${process.pid}-${runtime.replace(' ', '')}-${format}`;
    const result = await run(binary(), [script, env(tag)], { cwd: full });
    expectSuccess(result);
    const summary = JSON.parse(result.stdout) as {
      format: string;
      node: string;
      subpaths: Record<string, number>;
      adapters: Record<string, { statuses: number[]; replayed: string; executions: number }>;
      stores: Record<string, { runs: number }>;
    };
    expect(summary.node).toMatch(version);
    expect(summary.format).toBe(format);
    expect(Object.keys(summary.subpaths).sort()).toEqual([...subpaths].sort());
    for (const adapter of ['express', 'fastify', 'hono', 'node', 'fetch']) {
      expect(summary.adapters[adapter], adapter).toEqual({
        statuses: [201, 201],
        replayed: 'true',
        executions: 1,
      });
    }
    for (const store of ['memory', 'redis', 'postgres', 'kysely'])
      expect(summary.stores[store]?.runs, store).toBe(1);
    // require(esm) is stable from Node 20.19: no warning a CommonJS user would see on every start.
    expect(result.stderr).not.toMatch(/ExperimentalWarning/);
  });

  it('the oncely bin runs the demo that ships in dist/examples', async () => {
    const bin = join(full, 'node_modules/.bin/oncely');
    const result = await run(bin, ['demo', '--keys', '2', '--duplicates', '5', '--processing-ms', '5'], {
      cwd: full,
    });
    expectSuccess(result);
    expect(result.stdout).toMatch(/OK: 2 keys, each executed exactly once/);
  });
});

// Each case is one tsc run over every peer's declarations: seconds of CPU, more on a loaded machine.
describe('TypeScript consumers of the installed package', { timeout: 180_000 }, () => {
  const [, next] = compilers;

  it.for(compilers)('$name is the compiler it claims to be', async ({ tsc, major }, { expect }) => {
    const result = await run(tsc, ['--version'], { cwd: full });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Version ${major}\\.`));
  });

  // ESM consumers under every resolution; under nodenext a CommonJS module (.cts, its imports compile to
  // require()) joins the same program.
  const matrix = compilers.flatMap((compiler) =>
    (Object.keys(resolutions) as Resolution[]).map(
      (resolution) => [compiler.name, resolution, compiler] as const,
    ),
  );
  it.for(matrix)(
    '%s, %s: every subpath and the handler types of each adapter',
    async ([, resolution, compiler], { expect }) => {
      const files = resolution === 'nodenext' ? ['consumer.mts', 'consumer-require.cts'] : ['consumer.mts'];
      const config = writeTsconfig(full, `${compiler.major}-${resolution}`, files, resolutions[resolution]);
      const result = await run(compiler.tsc, ['-p', config], { cwd: full });
      expect(result.code, describeRun(result)).toBe(0);
    },
  );

  it('TypeScript 7, node16: a CommonJS module cannot import oncely (TS1479, as docs/install.md says)', async ({
    expect,
  }) => {
    const config = writeTsconfig(full, 'cjs-node16', ['consumer-require.cts'], resolutions.node16);
    const result = await run(next.tsc, ['-p', config], { cwd: full });
    expect(result.code, describeRun(result)).not.toBe(0);
    expect(result.stdout).toMatch(/error TS1479/);
  });

  // TypeScript 6+ includes no @types package unless `types` lists one. With `types: []` and no DOM lib, oncely's
  // declarations must load Node's types themselves (from the optional peer @types/node, installed in the app).
  const bareTypes = { ...resolutions.nodenext, types: [], lib: ['ES2023'] };

  it.for(compilers)(
    '$name, types: [], no DOM lib: a node:http service on oncely and oncely/node',
    async (compiler, { expect }) => {
      const config = writeTsconfig(full, `${compiler.major}-types-none`, ['consumer-node.mts'], bareTypes);
      const result = await run(compiler.tsc, ['-p', config], { cwd: full });
      expect(result.code, describeRun(result)).toBe(0);
    },
  );

  it.for(subpaths)('TypeScript 7, types: [], no DOM lib: %s alone', async (subpath, { expect }) => {
    const name = subpath.replace('/', '-');
    writeFileSync(join(full, `only-${name}.mts`), `import * as api from '${subpath}';\nexport { api };\n`);
    const config = writeTsconfig(full, `only-${name}`, [`only-${name}.mts`], bareTypes);
    const result = await run(next.tsc, ['-p', config], { cwd: full });
    expect(result.code, describeRun(result)).toBe(0);
  });
});

describe('attw (are the types wrong) on the tarball', () => {
  it('finds no problem for ESM consumers (node16 from ESM, bundler); the rest is what docs/install.md shows', async () => {
    const attw = join(repoRoot, 'node_modules/.bin/attw');
    const result = await run(
      attw,
      [tarball, '--format', 'json', '--profile', 'esm-only', '--no-definitely-typed'],
      {
        cwd: root,
      },
    );
    expectSuccess(result);
    const { analysis } = JSON.parse(result.stdout) as {
      analysis: { problems: { kind: string; entrypoint: string; resolutionKind: string }[] };
    };
    const byResolution: Record<string, Record<string, string[]>> = {};
    for (const { kind, entrypoint, resolutionKind } of analysis.problems) {
      const kinds = byResolution[resolutionKind] ?? {};
      kinds[kind] = [...(kinds[kind] ?? []), entrypoint];
      byResolution[resolutionKind] = kinds;
    }
    const code = subpaths.map((subpath) => (subpath === 'oncely' ? '.' : `./${subpath.slice(7)}`)).sort();
    for (const kinds of Object.values(byResolution))
      for (const entries of Object.values(kinds)) entries.sort();
    expect(byResolution).toEqual({
      // moduleResolution node10 reads only "types": the root resolves, subpaths need exports-aware resolution.
      node10: { NoResolution: code.filter((entry) => entry !== '.') },
      // require() of ESM: TypeScript before 5.8 (attw bundles 5.6) and node16 do not model it.
      'node16-cjs': { CJSResolvesToESM: code },
    });
  });
});
