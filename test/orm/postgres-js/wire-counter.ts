/**
 * @module A TCP proxy in front of PostgreSQL that reads what clients send and keeps the queries, so a test counts
 * round trips on the wire rather than in a library's calls: a simple-protocol `Query` message is one round trip, an
 * extended-protocol exchange (Parse/Bind/Execute…) is one per `Sync`.
 */
import { connect, createServer, type Socket } from 'node:net';
import { services } from '../../support/services.js';

export interface SentQuery {
  readonly protocol: 'simple' | 'extended';
  readonly text: string;
}

export interface WireCounter {
  /** A connection URL to the test database through the proxy. */
  readonly url: string;
  /** Every round trip the clients made since the last `reset`, in order. */
  readonly sent: SentQuery[];
  reset(): void;
  close(): Promise<void>;
}

// The startup-phase requests that come before the StartupMessage and have no type byte.
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/** Reads the frontend messages of one connection as its bytes arrive. */
function frontendReader(onQuery: (query: SentQuery) => void): (chunk: Buffer) => void {
  let buffered = Buffer.alloc(0);
  let startup = true;
  // Statement texts by name, per connection; the text of the statement the last Bind runs.
  const prepared = new Map<string, string>();
  let bound = '';
  return (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      if (startup) {
        if (buffered.length < 8) return;
        const length = buffered.readInt32BE(0);
        if (buffered.length < length) return;
        const code = buffered.readInt32BE(4);
        buffered = buffered.subarray(length);
        if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) startup = false;
        continue;
      }
      if (buffered.length < 5) return;
      const type = String.fromCharCode(buffered[0]!);
      const length = buffered.readInt32BE(1);
      if (buffered.length < 1 + length) return;
      const body = buffered.subarray(5, 1 + length);
      buffered = buffered.subarray(1 + length);
      if (type === 'Q') onQuery({ protocol: 'simple', text: body.toString('utf8', 0, body.indexOf(0)) });
      if (type === 'P') {
        // Parse: the statement's name, then its text, each null-terminated.
        const nameEnd = body.indexOf(0);
        prepared.set(
          body.toString('utf8', 0, nameEnd),
          body.toString('utf8', nameEnd + 1, body.indexOf(0, nameEnd + 1)),
        );
      }
      if (type === 'B') {
        // Bind: the portal's name, then the statement's (a statement prepared earlier runs without a Parse).
        const portalEnd = body.indexOf(0);
        bound = prepared.get(body.toString('utf8', portalEnd + 1, body.indexOf(0, portalEnd + 1))) ?? '';
      }
      if (type === 'S') onQuery({ protocol: 'extended', text: bound });
    }
  };
}

export async function startWireCounter(): Promise<WireCounter> {
  const sent: SentQuery[] = [];
  const sockets = new Set<Socket>();
  const target = new URL(services.postgres.url);
  const server = createServer((client) => {
    const upstream = connect({ host: target.hostname, port: Number(target.port || 5432) });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    const read = frontendReader((query) => sent.push(query));
    client.on('data', (chunk) => {
      read(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address !== 'object') throw new Error('the wire counter has no port');
  const url = new URL(services.postgres.url);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);
  return {
    url: url.href,
    sent,
    reset: () => {
      sent.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
