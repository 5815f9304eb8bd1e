// Preloaded into a bench server (`node --import bench/http/heap-sites.mjs …`) by bench/http/heap-sites.ts: V8's
// sampling heap profiler, keeping the objects the collector has cleared too, so the profile says where every byte a
// request allocates was allocated (a sample per `ONCELY_HEAP_SAMPLING` bytes on average, 256 by default). The first
// SIGUSR2 starts sampling; the next writes the profile to `$ONCELY_HEAP_SITES_DIR/<pid>.heapprofile` and stops.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.ONCELY_HEAP_SITES_DIR;
if (dir === undefined) throw new Error('heap-sites.mjs needs ONCELY_HEAP_SITES_DIR');
const session = new Session();
session.connect();
const post = (method, params) =>
  new Promise((resolve, reject) =>
    session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
  );
let sampling = false;

process.on('SIGUSR2', async () => {
  if (!sampling) {
    sampling = true;
    await post('HeapProfiler.enable');
    await post('HeapProfiler.startSampling', {
      samplingInterval: Number(process.env.ONCELY_HEAP_SAMPLING ?? 256),
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    writeFileSync(join(dir, `${process.pid}.started`), '');
    return;
  }
  const { profile } = await post('HeapProfiler.stopSampling');
  sampling = false;
  writeFileSync(join(dir, `${process.pid}.heapprofile`), JSON.stringify(profile));
});
