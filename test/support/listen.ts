/**
 * @module An HTTP server of a test's own on loopback: its port once it listens, and a close that ends keep-alive
 * connections too (a bare `server.close()` waits for every idle socket a client kept open). The one copy of the
 * listen and close blocks of the HTTP apps and tests.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The port of a server told to listen (`listen(0, '127.0.0.1')`), once it does. */
export async function listening(server: Server): Promise<number> {
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve));
  return (server.address() as AddressInfo).port;
}

/** Closes the server and every connection it holds, idle keep-alive ones included. */
export function closing(server: Server): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
}
