/**
 * @module The HTTP suite's harness for the Next.js app: `build` makes an app instance in the running server (the
 * case's store, by spec, and its options, functions as their source), sends the case's requests to it over a real
 * socket, and answers the instance's callbacks from this process, on the case's own counters, gates and logger.
 */
import { createServer, type Server } from 'node:http';
import type { Logger } from '../../../src/http/notices.js';
import { type AdapterHarness, socketClient } from '../../http/support/harness.js';
import type { Counters, Gates } from '../../http/support/routes.js';
import { closing, listening } from '../../support/listen.js';
import { APP_HEADER, type AppSpec, type Callbacks, type WireValue } from './next-app/lib/wire.js';
import { specOf } from './stores.js';

interface Hooks {
  readonly counters: Counters;
  readonly gates: Gates;
  readonly logger: Logger | undefined;
}

/** The test's server the app instances call back: a handler ran, reached its gate, logged a line. */
export interface CallbackServer {
  readonly url: string;
  register(app: string, hooks: Hooks): void;
  unregister(app: string): void;
  close(): Promise<void>;
}

export async function startCallbackServer(): Promise<CallbackServer> {
  const apps = new Map<string, Hooks>();
  const answer = async (path: string, body: Callbacks[keyof Callbacks]): Promise<unknown> => {
    const hooks = apps.get(body.app);
    if (hooks === undefined) throw new Error(`no app instance ${body.app} in this test`);
    if (path === '/bump') {
      const { route, key } = body as Callbacks['/bump'];
      return { n: hooks.counters.bump(route, key ?? undefined) };
    }
    if (path === '/gate') {
      const { key, arrive } = body as Callbacks['/gate'];
      if (arrive) hooks.gates.arrived.add(key);
      await hooks.gates.wait(key);
      return undefined;
    }
    if (path === '/warn') {
      hooks.logger?.warn((body as Callbacks['/warn']).message);
      return undefined;
    }
    throw new Error(`no callback ${path}`);
  };
  const server: Server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    request.on('end', () => {
      answer(request.url ?? '', JSON.parse(text)).then(
        (result) => {
          if (result === undefined) response.writeHead(204).end();
          else response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result));
        },
        (error: unknown) => response.writeHead(500).end(String(error)),
      );
    });
  });
  server.listen(0, '127.0.0.1');
  const port = await listening(server);
  return {
    url: `http://127.0.0.1:${port}`,
    register: (app, hooks) => apps.set(app, hooks),
    unregister: (app) => apps.delete(app),
    close: closing(server),
  };
}

/** The harness for the server at `baseUrl()` (known once beforeAll started it). */
export function nextHarness(baseUrl: () => string, callbacks: () => CallbackServer): AdapterHarness {
  return {
    name: 'Next.js route handlers (next start)',
    // The layer fingerprints the request's own bytes, as it does on every web-standard runtime.
    rawBytes: true,
    async build({ store, options, counters, gates }) {
      const { store: _store, ...rest } = options;
      const spec: AppSpec = { store: specOf(store), options: encode(rest) };
      const created = await fetch(`${baseUrl()}/harness/apps`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(spec),
      });
      if (created.status !== 201) throw new Error(`the app refused the instance: ${await created.text()}`);
      const { id } = (await created.json()) as { id: string };
      const logger =
        typeof rest.logger === 'object' && rest.logger !== null ? (rest.logger as Logger) : undefined;
      callbacks().register(id, { counters, gates, logger });
      const send = socketClient(baseUrl());
      return {
        port: Number(new URL(baseUrl()).port),
        request: (request) => send({ ...request, headers: { ...request.headers, [APP_HEADER]: id } }),
        close: async () => {
          await fetch(`${baseUrl()}/harness/apps/${id}`, { method: 'DELETE' });
          callbacks().unregister(id);
        },
      };
    },
  };
}

/** Options as the wire carries them (next-app/lib/wire.ts): functions by source, a logger by its lines. */
function encode(options: Record<string, unknown>): Record<string, WireValue> {
  const value = (name: string, option: unknown): WireValue => {
    if (name === 'logger' && typeof option === 'object' && option !== null) return { $logger: true };
    if (typeof option === 'function') return { $function: String(option) };
    if (Array.isArray(option)) return option.map((item) => value('', item));
    if (typeof option === 'object' && option !== null) return encode(option as Record<string, unknown>);
    if (option === undefined) throw new Error(`option ${name} is undefined: the wire has no undefined`);
    return option as WireValue;
  };
  return Object.fromEntries(Object.entries(options).map(([name, option]) => [name, value(name, option)]));
}
