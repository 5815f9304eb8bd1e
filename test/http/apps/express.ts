import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Request, Response } from 'express';
import { idempotency } from '../../../src/http/express.js';
import { type AdapterHarness, overSocket } from '../support/harness.js';
import { binaryBody, LARGE_PAD } from '../support/routes.js';

type Handler = (req: Request, res: Response, next: (error?: unknown) => void) => unknown;
interface ExpressApp {
  use(...handlers: unknown[]): void;
  get(path: string, ...handlers: unknown[]): void;
  post(path: string, ...handlers: unknown[]): void;
  listen(port: number, host: string): Server;
}
interface ExpressModule {
  (): ExpressApp;
  json(): unknown;
  text(): unknown;
  raw(options: { type: string }): unknown;
}

/** The suite's app on Express; `express` is the module under test (Express 5, or 4 through `express4`). */
export function expressHarness(name: string, express: ExpressModule): AdapterHarness {
  return {
    name,
    rawBytes: false,
    partialWrites: true,
    async build({ options, counters, gates }) {
      const app = express();
      // Per-request headers of middleware before the layer: a request id and CORS, as cors() sets them.
      app.use((req: Request, res: Response, next: () => void) => {
        res.setHeader('x-request-id', randomUUID());
        res.setHeader('cache-control', 'no-store');
        if (req.headers.origin) res.setHeader('access-control-allow-origin', req.headers.origin);
        next();
      });
      app.use(express.json());
      app.use(express.text());
      app.use(express.raw({ type: 'application/octet-stream' }));
      const idem = idempotency(options as never);
      const keyOf = (res: Response) => res.locals.idempotency?.key;
      const route = (path: string, handler: Handler) => app.post(path, idem, handler);

      route('/payments', (req, res) => {
        const n = counters.bump('payments', keyOf(res));
        res.setHeader('x-handler', 'yes');
        res.setHeader('cache-control', 'private');
        res.setHeader('set-cookie', ['session=abc; Path=/', 'theme=dark; Path=/']);
        res.status(201).json({ id: randomUUID(), n, body: req.body });
      });
      route('/text', (_req, res) => {
        res.type('text/plain').send(`hello ${counters.bump('text', keyOf(res))}`);
      });
      route('/binary', (_req, res) => {
        res.type('application/octet-stream').send(binaryBody(counters.bump('binary', keyOf(res))));
      });
      route('/stream', (_req, res) => {
        const n = counters.bump('stream', keyOf(res));
        res.setHeader('content-type', 'text/plain');
        res.write('part1-');
        setTimeout(() => {
          res.write(Buffer.from('part2-'));
          res.end(String(n));
        }, 5);
      });
      route('/partial', (req, res) => {
        const [chunks, mode] = String(req.headers['x-partial'] ?? '0:end').split(':');
        counters.bump('partial', keyOf(res));
        res.status(201).setHeader('content-type', 'text/plain');
        for (let index = 0; index < Number(chunks); index++) res.write(`part${index}-`);
        if (mode === 'throw') throw new Error('thrown after a partial write');
        if (mode === 'header') res.setHeader('x-late', 'yes');
        if (mode === 'status') res.status(500);
        res.end('done');
      });
      route('/empty', (_req, res) => {
        counters.bump('empty', keyOf(res));
        res.status(204).end();
      });
      route('/status/:code', (req, res) => {
        const n = counters.bump('status', keyOf(res));
        res.status(Number(req.params.code)).json({ n });
      });
      route('/fail-once', (_req, res) => {
        const n = counters.bump('fail-once', keyOf(res));
        res.status(n === 1 ? 500 : 201).json({ n });
      });
      route('/throw', (_req, res) => {
        const n = counters.bump('throw', keyOf(res));
        if (n === 1) throw new Error('boom');
        res.status(201).json({ n });
      });
      route('/skip', (_req, res) => {
        const n = counters.bump('skip', keyOf(res));
        res.locals.idempotency?.skipStorage();
        res.status(201).json({ n });
      });
      route('/large', (_req, res) => {
        res.status(201).json({ n: counters.bump('large', keyOf(res)), pad: LARGE_PAD });
      });
      route('/slow', async (_req, res) => {
        const key = keyOf(res)!;
        const n = counters.bump('slow', key);
        gates.arrived.add(key);
        await gates.wait(key);
        res.status(201).json({ n, id: randomUUID() });
      });
      route('/defer', (_req, res) => {
        const context = res.locals.idempotency!;
        const n = counters.bump('defer', context.key);
        context.defer(async () => {
          await gates.wait(context.key);
          return { status: 201, json: { n } };
        });
      });
      app.get('/operations/:id', idem.status);
      app.get('/payments', (_req: Request, res: Response) => {
        res.json({ n: counters.bump('get-payments', undefined) });
      });
      // Express 4 prints errors to stderr through its final handler; keep test output readable.
      app.use((error: { status?: number }, _req: Request, res: Response, _next: unknown) => {
        res.status(error.status ?? 500).send('error');
      });

      return overSocket(app.listen(0, '127.0.0.1'));
    },
  };
}
