// The stored record's size in Redis, for one 200-byte JSON body and the other sizes of the memory table: STRLEN (the
// value's bytes) and MEMORY USAGE (what Redis holds for the key: value and key in jemalloc's size classes, the object
// and the dict entry). Counts, not times: the same on a busy machine as on a quiet one, so a layout change can be
// judged by them alone. Records are written through the Engine as every entry point writes them: a 43-character
// SHA-256 fingerprint (base64url) and `content-type: application/json`; without a label (the memory table of
// docs/benchmarks.md) and with the label an HTTP route gives (`POST /payments`). The overhead column (MEMORY USAGE
// less the body as stored) is the fixed cost per record `oncely estimate` adds to a body. Prints a table; writes
// nothing.
// Run: node --import tsx bench/redis/record-size.ts   (a disposable redis-server of its own)
import { createHash } from 'node:crypto';
import { RedisStore } from '../../src/stores/redis/index.js';
import { type Bench, engineKey, jsonBody, newEngine, startBench } from './fixtures.js';
import { median } from './report.js';

const SAMPLE = 50;
const fingerprintOf = (i: number) => createHash('sha256').update(`request ${i}`).digest('base64url');

interface Row {
  readonly name: string;
  readonly strlen: number;
  readonly memory: number;
  readonly body: number;
  /** The body as the record holds it (brotli from 1 KiB, by the engine's `sealOutcome`). */
  readonly stored: number;
}

async function measure(bench: Bench, name: string, size: number, scope: string | undefined): Promise<Row> {
  const store = new RedisStore({ client: bench.client, prefix: 'oncely' });
  const engine = newEngine(store);
  const strlen: number[] = [];
  const memory: number[] = [];
  const stored: number[] = [];
  for (let i = 0; i < SAMPLE; i++) {
    const key = engineKey(`${name}-${i}`);
    const run = async () => jsonBody(size, 1_000 + i);
    const fingerprint = fingerprintOf(i);
    if (size === 0) await engine.begin({ key, fingerprint, ...(scope ? { scope } : {}) });
    else
      await engine.execute({
        key,
        fingerprint,
        ...(scope ? { scope } : {}),
        run,
        settle: (body) => ({
          keep: true,
          outcome: { status: 201, headers: [['content-type', 'application/json']], body },
        }),
      });
    const recordKey = store.keys.record(key);
    strlen.push(Number(await bench.admin.strlen(recordKey)));
    memory.push(Number(await bench.admin.memory('USAGE', recordKey, 'SAMPLES', '0')));
    stored.push((await store.get(key))?.outcome?.body.byteLength ?? 0);
  }
  return { name, strlen: median(strlen), memory: median(memory), body: size, stored: median(stored) };
}

const bench = await startBench();
try {
  const rows: Row[] = [];
  for (const scope of [undefined, 'POST /payments']) {
    const label = scope === undefined ? 'no label' : `label '${scope}'`;
    rows.push(await measure(bench, `in progress, ${label}`, 0, scope));
    for (const size of [200, 1024, 4096, 10_240])
      rows.push(await measure(bench, `${size} B JSON, ${label}`, size, scope));
  }
  console.log('| record | body as stored | STRLEN | MEMORY USAGE | overhead | MEMORY USAGE / raw body |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const row of rows) {
    const ratio = row.body === 0 ? '—' : `${(row.memory / row.body).toFixed(2)}×`;
    console.log(
      `| ${row.name} | ${row.stored} | ${row.strlen} | ${row.memory} | ${row.memory - row.stored} | ${ratio} |`,
    );
  }
} finally {
  await bench.close();
}
