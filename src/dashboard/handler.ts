/**
 * @module `dashboard(options)`: the dashboard as request handlers, one for node:http (and Express or Connect
 * middleware) and one for Fetch, to mount behind the application's own authentication.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DashboardRequest } from './guard.js';
import { type DashboardOptions, type ResolvedDashboard, resolveDashboardOptions } from './options.js';
import { type DashboardResponse, route, SECURITY_HEADERS } from './routes.js';
import { Snapshots } from './snapshot.js';
import { below, splitTarget } from './target.js';

/** The dashboard as request handlers; mount one behind your own authentication. */
export interface Dashboard {
  /**
   * A `node:http` handler (also Express / Connect middleware: a request outside `basePath` goes to `next`, or
   * gets 404 without one). It reads `req.originalUrl` when the framework sets it, else `req.url`, as a path as
   * sent (target.ts), so it can be mounted app-wide beside a guard on `basePath`. An answer that comes after the
   * application answered (a request timeout) is dropped.
   */
  readonly node: (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;
  /** A Fetch handler (Hono, Bun, Deno, workers): a request outside `basePath` gets 404. */
  readonly fetch: (request: Request) => Promise<Response>;
}

/**
 * One page for operators: keys by state, a key's record, recent engine events, outbox backlog and dead letters,
 * parked inbox messages, live. Reads through the caller's client; writes nothing unless `actions` is on (then
 * each action needs the token, a same-origin POST and a JSON body). Never shows a stored body unless asked for
 * one key. Mount it behind the application's own authentication: see docs/dashboard.md.
 *
 * @example
 * import { dashboard } from 'oncely/dashboard';
 * const board = dashboard({ source: { postgres: pool }, basePath: '/ops/oncely' });
 * app.use('/ops/oncely', requireOperator, board.node);
 */
export function dashboard(options: DashboardOptions): Dashboard {
  const resolved = resolveDashboardOptions(options);
  const snapshots = new Snapshots(resolved);
  const handle = (request: DashboardRequest) => respond(resolved, snapshots, request);

  return {
    node: function oncelyDashboard(req, res, next) {
      const target = splitTarget((req as { originalUrl?: string }).originalUrl ?? req.url ?? '/');
      const path = below(resolved.basePath, target.pathname);
      if (path === undefined) {
        if (next) return next();
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found');
        return;
      }
      void handle(nodeRequest(req, path, target.query)).then(
        (response) => writeResponse(req, res, response),
        (error: unknown) => {
          if (next) return next(error);
          res.destroy(error instanceof Error ? error : undefined);
        },
      );
    },
    fetch: async (request) => {
      // A Request's url is absolute: its authority is the Host, never a piece of the path, and a Fetch router
      // (Hono's getPath) reads the same already-normalized path from it.
      const url = new URL(request.url);
      const path = below(resolved.basePath, url.pathname);
      if (path === undefined) return new Response('not found', { status: 404 });
      const response = await handle({
        method: request.method,
        path,
        query: url.searchParams,
        header: (name) => request.headers.get(name) ?? undefined,
        text: async (limit) => {
          const text = await request.text();
          return Buffer.byteLength(text) > limit ? undefined : text;
        },
      });
      return new Response(request.method === 'HEAD' ? null : response.body, {
        status: response.status,
        headers: response.headers,
      });
    },
  };
}

/** A failing store turns into a 503 with its message; the page shows it and keeps polling. */
async function respond(
  options: ResolvedDashboard,
  snapshots: Snapshots,
  request: DashboardRequest,
): Promise<DashboardResponse> {
  try {
    return await route(options, snapshots, request);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      status: 503,
      headers: { ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ ok: false, message }),
    };
  }
}

/**
 * Writes the dashboard's answer, or drops it when the application answered first (a request-timeout middleware
 * while a snapshot was slow): `writeHead` would throw ERR_HTTP_HEADERS_SENT inside this promise callback, an
 * unhandled rejection that ends the process. `headersSent` is enough: an ended response has sent its headers.
 * The HTTP adapters' `writeAnswer` drops late answers the same way.
 */
function writeResponse(req: IncomingMessage, res: ServerResponse, response: DashboardResponse): void {
  if (res.headersSent) return;
  res.writeHead(response.status, response.headers);
  res.end(req.method === 'HEAD' ? undefined : response.body);
}

function nodeRequest(req: IncomingMessage, path: string, query: URLSearchParams): DashboardRequest {
  return {
    method: req.method ?? 'GET',
    path,
    query,
    header: (name) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(', ') : value;
    },
    text: (limit) => {
      // A body parser of the application (express.json()) may have read the stream already.
      const parsed = (req as { body?: unknown }).body;
      if (parsed !== undefined) {
        const text = typeof parsed === 'string' ? parsed : JSON.stringify(parsed);
        return Promise.resolve(Buffer.byteLength(text) > limit ? undefined : text);
      }
      if (req.readableEnded) return Promise.resolve('');
      return new Promise((resolve, reject) => {
        const chunks: Buffer[] = [];
        let size = 0;
        req.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= limit) chunks.push(chunk);
        });
        req.once('end', () => resolve(size > limit ? undefined : Buffer.concat(chunks).toString('utf8')));
        req.once('error', reject);
      });
    },
  };
}
