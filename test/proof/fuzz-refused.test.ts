import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { RequestSpec } from '../../proof/fuzz/requests.js';
import { KEY_HEADER } from '../../proof/fuzz/shared.js';
import { refusedBeforeItsBody } from '../../proof/fuzz.js';

// The fuzz forgives a request left without an answer only when the server refused it before reading its body and
// closed the connection (the client's next write then draws a reset that can take the answer with it). These hold
// that exemption to exactly that case: everything else a server does to a request without answering stays a
// finding.
const spec = (headers: ReadonlyArray<readonly [string, string]>): RequestSpec => ({
  method: 'POST',
  target: '/payments',
  headers: [['Host', '127.0.0.1'], ['Content-Type', ';;;'], ...headers],
  body: Buffer.from('{"amount":1}'),
  framing: 'length',
  chunks: [],
  splits: [],
  malformed: undefined,
  id: 'refused-1',
});

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<number> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('the fuzz: a request the server refused before its body', () => {
  it('is forgiven when a 4xx that no handler gave closes the connection', async () => {
    const port = await serve((_req, res) => {
      res.writeHead(415, { connection: 'close', 'content-length': '0' }).end();
    });
    expect(await refusedBeforeItsBody(port, spec([['Connection', 'close']]))).toBe(true);
  });

  it('is not forgiven when the connection stays open (nothing can reset the answer)', async () => {
    const port = await serve((_req, res) => {
      res.writeHead(415, { 'content-length': '0' }).end();
    });
    expect(await refusedBeforeItsBody(port, spec([]))).toBe(false);
  });

  it('is not forgiven when the handler ran (its answer carries a claim)', async () => {
    const port = await serve((_req, res) => {
      res.writeHead(400, { connection: 'close', 'content-length': '0', [KEY_HEADER]: 'k' }).end();
    });
    expect(await refusedBeforeItsBody(port, spec([['Connection', 'close']]))).toBe(false);
  });

  it('is not forgiven when the server drops the connection again, or answers 2xx or 5xx', async () => {
    let port = await serve((req) => req.socket.destroy());
    expect(await refusedBeforeItsBody(port, spec([['Connection', 'close']]))).toBe(false);
    server?.close();
    for (const status of [201, 503]) {
      port = await serve((_req, res) => {
        res.writeHead(status, { connection: 'close', 'content-length': '0' }).end();
      });
      expect(await refusedBeforeItsBody(port, spec([['Connection', 'close']]))).toBe(false);
      server?.close();
    }
  });
});
