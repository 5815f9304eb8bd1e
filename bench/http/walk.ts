/**
 * @module bench/http/walk
 * The walk of one request through the library: which source files one Express request with a new key enters, and
 * how many times each. A file entered many times is a file the request keeps coming back to (a view read piece by
 * piece, a flow that calls back and forth); many files mean a path that is hard to follow. The numbers are counts,
 * not times: they read the same on any machine.
 *
 * How: V8's precise coverage (`node:inspector`, `Profiler.startPreciseCoverage` with call counts) counts every
 * function call. One warm-up request loads every module and fills the caches; the counters are reset; one request
 * with a fresh key runs; every call into a function of a file under `src/` (or the compiled `dist/`) counts as one
 * entry into that file. tsx's `__name` helper (its keep-names wrapper, made per closure) is not the library's code
 * and is left out.
 *
 * Run: node --import tsx bench/http/walk.ts            (the sources)
 *      ONCELY_LIB=dist node --import tsx bench/http/walk.ts   (the compiled dist/, after npm run build)
 */
import { createServer, request as httpRequest } from 'node:http';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import express from 'express';

const root = fileURLToPath(new URL('../../', import.meta.url));
const lib = process.env.ONCELY_LIB === 'dist' ? 'dist' : 'src';
const load = <T>(path: string): Promise<T> => import(`../../${lib}/${path}`) as Promise<T>;
const { idempotency } = await load<typeof import('../../src/http/express.js')>('http/express.js');
const { MemoryStore } = await load<typeof import('../../src/stores/memory.js')>('stores/memory.js');

const app = express();
app.use(express.json());
app.post('/payments', idempotency({ store: new MemoryStore() }), (req, res) => {
  const { amount, currency } = req.body as { amount: number; currency: string };
  res
    .status(201)
    .type('application/json')
    .send(JSON.stringify({ id: 'pay_1', amount, currency }));
});
const server = createServer(app);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;

/** One POST with a fresh key; resolves with the status once the response is read whole. */
function post(key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = '{"amount":100,"currency":"EUR"}';
    const req = httpRequest(
      {
        port,
        host: '127.0.0.1',
        method: 'POST',
        path: '/payments',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
for (let warm = 0; warm < 3; warm++) await post(`warm-${warm}`);
await session.post('Profiler.takePreciseCoverage'); // resets the counters
const status = await post('walk-1');
// Work the request left for later (a timer's release, a settled promise's callbacks) belongs to it too.
await new Promise((resolve) => setTimeout(resolve, 50));
const { result } = await session.post('Profiler.takePreciseCoverage');
await session.post('Profiler.stopPreciseCoverage');
session.disconnect();
server.close();

const prefix = `file://${root}${lib}/`;
const entries = new Map<string, number>();
for (const script of result) {
  if (!script.url.startsWith(prefix)) continue;
  const file = script.url.slice(prefix.length);
  for (const fn of script.functions) {
    // The first range is the function's own; its count is how often it was called. Index 0 is the module itself.
    const calls = fn.ranges[0]?.count ?? 0;
    if (calls === 0 || fn.functionName === '__name' || fn.functionName === '') {
      // An unnamed function is either the module body (count 1 at load, 0 here) or a callback: keep callbacks.
      if (calls === 0 || fn.functionName === '__name' || fn.ranges[0]?.startOffset === 0) continue;
    }
    entries.set(file, (entries.get(file) ?? 0) + calls);
  }
}
const rows = [...entries].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
if (status !== 201) throw new Error(`the walked request answered ${status}`);
console.log(
  `one Express request with a new key (${lib}/): ${rows.length} files, ${rows.reduce((n, [, c]) => n + c, 0)} entries`,
);
for (const [file, calls] of rows) console.log(`${String(calls).padStart(4)}  ${file}`);
