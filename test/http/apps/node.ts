import { randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import { idempotency } from '../../../src/http/node.js';
import { type AdapterHarness, overSocket } from '../support/harness.js';
import { binaryBody, LARGE_PAD } from '../support/routes.js';

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

/** The suite's app on plain node:http behind the `oncely/node` wrapper, over a real socket. */
export const nodeHarness: AdapterHarness = {
  name: 'node',
  rawBytes: true,
  partialWrites: true,
  async build({ options, counters, gates }) {
    const idem = idempotency(options as never);
    const listener = idem(async (req, res, { body, idempotency: context }) => {
      const key = context?.key;
      const path = (req.url ?? '/').split('?')[0]!;
      if (req.method === 'GET' && path.startsWith('/operations/'))
        return idem.status(req, res, path.slice(12));
      if (req.method === 'GET' && path === '/payments')
        return json(res, 200, { n: counters.bump('get-payments', undefined) });
      const status = /^\/status\/(\d+)$/.exec(path);
      if (status) return json(res, Number(status[1]), { n: counters.bump('status', key) });
      if (path === '/partial') {
        const [chunks, mode] = String(req.headers['x-partial'] ?? '0:end').split(':');
        counters.bump('partial', key);
        res.statusCode = 201;
        res.setHeader('content-type', 'text/plain');
        for (let index = 0; index < Number(chunks); index++) res.write(`part${index}-`);
        if (mode === 'throw') throw new Error('thrown after a partial write');
        if (mode === 'header') res.setHeader('x-late', 'yes');
        if (mode === 'status') res.statusCode = 500;
        return res.end('done');
      }
      switch (path) {
        case '/payments': {
          const n = counters.bump('payments', key);
          const text = String(body ?? '');
          res.setHeader('x-handler', 'yes');
          res.setHeader('cache-control', 'private');
          res.setHeader('set-cookie', ['session=abc; Path=/', 'theme=dark; Path=/']);
          return json(res, 201, {
            id: randomUUID(),
            n,
            body: req.headers['content-type']?.includes('json') && text !== '' ? JSON.parse(text) : text,
          });
        }
        case '/text':
          res.setHeader('content-type', 'text/plain');
          return res.end(`hello ${counters.bump('text', key)}`);
        case '/binary':
          res.writeHead(200, 'OK', { 'content-type': 'application/octet-stream' });
          return res.end(binaryBody(counters.bump('binary', key)));
        case '/stream': {
          const n = counters.bump('stream', key);
          res.setHeader('content-type', 'text/plain');
          res.write('part1-');
          await new Promise((resolve) => setTimeout(resolve, 5));
          res.write(Buffer.from('part2-'));
          return res.end(String(n), 'utf8');
        }
        case '/empty':
          counters.bump('empty', key);
          res.statusCode = 204;
          return res.end();
        case '/fail-once': {
          const n = counters.bump('fail-once', key);
          return json(res, n === 1 ? 500 : 201, { n });
        }
        case '/throw': {
          const n = counters.bump('throw', key);
          if (n === 1) throw new Error('boom');
          return json(res, 201, { n });
        }
        case '/skip': {
          const n = counters.bump('skip', key);
          context?.skipStorage();
          return json(res, 201, { n });
        }
        case '/large':
          return json(res, 201, { n: counters.bump('large', key), pad: LARGE_PAD });
        case '/slow': {
          const n = counters.bump('slow', key);
          gates.arrived.add(key!);
          await gates.wait(key!);
          return json(res, 201, { n, id: randomUUID() });
        }
        case '/defer': {
          const n = counters.bump('defer', key);
          return context!.defer(async () => {
            await gates.wait(key!);
            return { status: 201, json: { n } };
          });
        }
      }
      return json(res, 404, { error: 'not found' });
    });
    // Per-request headers set before the wrapped listener runs: a request id and CORS.
    const server = createServer((req, res) => {
      res.setHeader('x-request-id', randomUUID());
      res.setHeader('cache-control', 'no-store');
      if (req.headers.origin) res.setHeader('access-control-allow-origin', req.headers.origin);
      listener(req, res);
    });
    return overSocket(server.listen(0, '127.0.0.1'));
  },
};
