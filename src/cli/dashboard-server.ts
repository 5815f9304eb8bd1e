/**
 * @module The HTTP server behind `oncely dashboard` and the demo's live dashboard: the dashboard handler on a port of
 * its own.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pool } from 'pg';
import { dashboard } from '../dashboard/handler.js';
import type { DashboardOptions } from '../dashboard/options.js';
import { CommandFailed } from './errors.js';

export interface DashboardServerOptions {
  readonly source: DashboardOptions['source'];
  readonly outbox?: { readonly pool: Pool; readonly schema?: string } | false;
  readonly host: string;
  readonly port: number;
  /** Set when the actions are on or the host is beyond loopback; then it is in every printed link's fragment. */
  readonly token?: string | undefined;
  readonly actions: boolean;
}

export interface DashboardServer {
  /** The page's address, with `#token=…` when there is a token (a fragment: browsers never send it). */
  readonly url: string;
  close(): Promise<void>;
}

/** 127.0.0.0/8, ::1 and localhost: the addresses only this machine reaches. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Serves the dashboard handler on `host:port`. On loopback it answers only the loopback names of its own port
 * (a DNS name rebound to 127.0.0.1 gets nothing); beyond loopback every API call needs the token.
 */
export async function startDashboardServer(options: DashboardServerOptions): Promise<DashboardServer> {
  const { host, port, token, actions } = options;
  const loopback = isLoopback(host);
  // Listening comes first: the allowed Host names carry the port, which --port 0 learns only now.
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((error: NodeJS.ErrnoException) => {
    throw new CommandFailed(
      error.code === 'EADDRINUSE'
        ? `dashboard: port ${port} on ${host} is in use; pick another with --port (0 picks a free one)`
        : `dashboard: cannot listen on ${host}:${port} (${error.message})`,
    );
  });
  const listening = (server.address() as AddressInfo).port;
  try {
    const board = dashboard({
      source: options.source,
      ...(options.outbox === undefined ? {} : { outbox: options.outbox }),
      ...(token === undefined ? {} : { token }),
      actions,
      readsNeedToken: !loopback,
      ...(loopback
        ? { allowedHosts: ['127.0.0.1', 'localhost', '[::1]'].map((name) => `${name}:${listening}`) }
        : {}),
    });
    server.on('request', board.node);
  } catch (error) {
    server.close();
    throw error;
  }
  const shownHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${listening}/${token === undefined ? '' : `#token=${encodeURIComponent(token)}`}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
