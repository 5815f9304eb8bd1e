/**
 * @module The runtime app on Deno: `Deno.serve` calls the handlers with `(request, info)`; the handler reads the
 * client's address from `info.remoteAddr`. Prints `listening <port>` once it accepts connections.
 */
import { runtimeApp } from './runtime-app.js';

// Deno's global, as much of it as this file uses (no Deno types are loaded for the Node type-check).
declare const Deno: {
  serve(
    options: { port: number; hostname: string; onListen: (address: { port: number }) => void },
    handler: (request: Request, info: DenoServeInfo) => Promise<Response>,
  ): unknown;
};
interface DenoServeInfo {
  readonly remoteAddr: { readonly hostname: string };
}

const app = runtimeApp((_request, info) => (info as DenoServeInfo).remoteAddr.hostname);
Deno.serve(
  { port: 0, hostname: '127.0.0.1', onListen: ({ port }) => console.log(`listening ${port}`) },
  (request, info) => app(request, info),
);
