/**
 * @module bench/http/walk
 * The walk of one request through the library: which source files one Express request with a new key enters, and
 * how many times each. A file entered many times is a file the request keeps coming back to (a view read piece by
 * piece, a flow that calls back and forth); many files mean a path that is hard to follow. The numbers are counts,
 * not times: they read the same on any machine.
 *
 * How, in one process: warm-up requests load every module and fill the caches, then one request with a fresh key
 * is walked two ways. V8's precise coverage (`Profiler.startPreciseCoverage` with call counts) counts every call
 * of every function in a file under `src/` (or the compiled `dist/`): the *calls*. A tracer thread
 * (walk-tracer.mjs, on the inspector's Debugger) breaks at the first statement of each function that ran and looks
 * at the caller's frame: a call from another file, from a framework, or from the event loop or a promise job
 * *enters* the file; a call from the file's own code does not (a file's helpers are one visit). tsx's `__name`
 * helper (its keep-names wrapper, made per closure) is not the library's code and is left out.
 *
 * Run: node --import tsx bench/http/walk.ts            (the sources)
 *      ONCELY_LIB=dist node --import tsx bench/http/walk.ts   (the compiled dist/, after npm run build)
 */
import { createServer, request as httpRequest } from 'node:http';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
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
// The library's functions that ran for the warm-up requests (the same path as the walked one): their calls are
// counted again below, and the tracer breaks at each to see where it was called from.
const warmed = (await session.post('Profiler.takePreciseCoverage')).result; // also resets the counters
const prefix = `file://${root}${lib}/`;
const functions: [string, { start: number; end: number }[]][] = warmed
  .filter((script) => script.url.startsWith(prefix))
  .map((script) => [
    script.url,
    script.functions
      .filter(
        (fn) =>
          (fn.ranges[0]?.count ?? 0) > 0 && fn.ranges[0]!.startOffset > 0 && fn.functionName !== '__name',
      )
      .map((fn) => ({ start: fn.ranges[0]!.startOffset, end: fn.ranges[0]!.endOffset })),
  ]);

const tracer = new Worker(new URL('./walk-tracer.mjs', import.meta.url));
const reply = <T>() => new Promise<T>((resolve) => tracer.once('message', resolve));
tracer.postMessage({ kind: 'arm', functions });
const { breakpoints } = await reply<{ breakpoints: number }>();
const status = await post('walk-1');
// Work the request left for later (a timer's release, a settled promise's callbacks) belongs to it too.
await new Promise((resolve) => setTimeout(resolve, 50));
tracer.postMessage({ kind: 'disarm' });
const traced = await reply<{ calls: [string, number][]; entries: [string, number][] }>();
await tracer.terminate();
const { result } = await session.post('Profiler.takePreciseCoverage');
await session.post('Profiler.stopPreciseCoverage');
session.disconnect();
server.close();
if (status !== 201) throw new Error(`the walked request answered ${status}`);

/** Calls per file, from precise coverage: every call of a function counts, the module bodies and tsx's helper not. */
const calls = new Map<string, number>();
for (const script of result) {
  if (!script.url.startsWith(prefix)) continue;
  for (const fn of script.functions) {
    const count = fn.ranges[0]?.count ?? 0;
    if (count === 0 || fn.functionName === '__name' || fn.ranges[0]!.startOffset === 0) continue;
    calls.set(script.url, (calls.get(script.url) ?? 0) + count);
  }
}
const entries = new Map(traced.entries);
const tracedCalls = traced.calls.reduce((sum, [, count]) => sum + count, 0);
const rows = [...calls].sort(
  (a, b) => (entries.get(b[0]) ?? 0) - (entries.get(a[0]) ?? 0) || b[1] - a[1] || a[0].localeCompare(b[0]),
);
const total = (values: Iterable<number>) => [...values].reduce((sum, value) => sum + value, 0);
const most = Math.max(...entries.values());
console.log(
  `one Express request with a new key (${lib}/): ${rows.length} files; ${total(entries.values())} entries from another file (most ${most}); ${total(calls.values())} function calls`,
);
console.log(
  `(the tracer saw ${tracedCalls} of the calls, at ${breakpoints} breakpoints: a function whose first statement is not where it starts may be missed)`,
);
console.log('entered  calls  file');
for (const [url, count] of rows) {
  console.log(
    `${String(entries.get(url) ?? 0).padStart(7)}  ${String(count).padStart(5)}  ${url.slice(prefix.length)}`,
  );
}
