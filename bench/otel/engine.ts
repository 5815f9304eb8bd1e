// The instrumentation's own share of the CPU, in process, on the cheapest path there is: `idempotent()` on a
// MemoryStore, a new key per call, no HTTP, no network, no business logic (so every share here is an upper bound
// of what it is behind a real route). A CPU profile of the run is split by where each sample was: in oncely/otel,
// in @opentelemetry/* (the API; with the SDK, the SDK too), or elsewhere. A share of samples, unlike a throughput,
// hardly moves with the load other processes put on a shared machine.
// Run (after npm run build): node --import tsx bench/otel/engine.ts
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CALLS = Number(process.env.CALLS ?? 600_000);

if (process.env.ONCELY_OTEL_CHILD === '1') {
  const lib = '../../dist';
  const { idempotent, MemoryStore } = (await import(
    `${lib}/index.js`
  )) as typeof import('../../src/index.js');
  const { otel } = (await import(`${lib}/otel/index.js`)) as typeof import('../../src/otel/index.js');
  if (process.env.OTEL_SDK === '1') (await import('../http/otel-sdk.js')).registerSdk();
  const charge = idempotent(async (order: { id: number }) => ({ paid: order.id }), {
    key: (order) => String(order.id),
    scope: 'bench',
    store: new MemoryStore({ maxEntries: 2_000_000 }),
    ...(process.env.INSTRUMENTED === '1' ? { instrumentation: otel() } : {}),
  });
  let next = 0;
  for (let done = 0; done < CALLS; done += 64)
    await Promise.all(Array.from({ length: 64 }, () => charge({ id: next++ })));
  process.exit(0);
}

interface Profile {
  nodes: { id: number; callFrame: { url: string; functionName: string } }[];
  samples: number[];
}

/** Runs the workload under --cpu-prof and splits its samples. */
function profile(env: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'oncely-otel-prof-'));
  try {
    execFileSync(
      process.execPath,
      ['--import', 'tsx', '--cpu-prof', `--cpu-prof-dir=${dir}`, fileURLToPath(import.meta.url)],
      {
        env: { ...process.env, ...env, ONCELY_OTEL_CHILD: '1' },
        stdio: 'inherit',
      },
    );
    const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'))!;
    const data = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
    const urls = new Map(data.nodes.map((node) => [node.id, node.callFrame.url]));
    let ours = 0;
    let library = 0;
    for (const sample of data.samples) {
      const url = urls.get(sample) ?? '';
      if (url.includes('/dist/otel/')) ours++;
      else if (url.includes('/@opentelemetry/')) library++;
    }
    const total = data.samples.length;
    return { total, ours: ours / total, library: library / total };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const percent = (share: number) => `${(share * 100).toFixed(1)}%`;
for (const [label, env] of [
  ['API only (no SDK registered)', { INSTRUMENTED: '1' }],
  ['SDK registered, instrumented', { INSTRUMENTED: '1', OTEL_SDK: '1' }],
] as const) {
  const { total, ours, library } = profile(env);
  console.log(
    `${label}: oncely/otel ${percent(ours)}, @opentelemetry/* ${percent(library)} of ${total} samples ` +
      `(${CALLS} calls; load ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' ')})`,
  );
}
