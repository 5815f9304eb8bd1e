// Preloaded into a bench server (`node --import bench/http/heap-counter.mjs …`) by bench/http/allocations.ts: counts
// the bytes the process allocates on the JS heap. V8's GC profiler reports the used heap before and after every
// collection; what the heap grew by between collections, plus its growth since the last one, is what was
// allocated. On SIGUSR2 the count since the previous signal is written as JSON to
// `$ONCELY_HEAP_COUNT_DIR/<pid>-<n>.json` (n counts the signals from 0), and counting starts again.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import v8 from 'node:v8';

const dir = process.env.ONCELY_HEAP_COUNT_DIR;
if (dir === undefined) throw new Error('heap-counter.mjs needs ONCELY_HEAP_COUNT_DIR');
let profiler = new v8.GCProfiler();
profiler.start();
let usedAtStart = v8.getHeapStatistics().used_heap_size;
let signals = 0;

process.on('SIGUSR2', () => {
  const { statistics } = profiler.stop();
  let allocated = 0;
  let used = usedAtStart;
  let gcMicros = 0;
  for (const gc of statistics) {
    allocated += gc.beforeGC.heapStatistics.usedHeapSize - used;
    used = gc.afterGC.heapStatistics.usedHeapSize;
    gcMicros += gc.cost;
  }
  const now = v8.getHeapStatistics().used_heap_size;
  allocated += now - used;
  usedAtStart = now;
  profiler = new v8.GCProfiler();
  profiler.start();
  const file = join(dir, `${process.pid}-${signals++}.json`);
  writeFileSync(file, JSON.stringify({ allocated, collections: statistics.length, gcMicros }));
});
