/**
 * @module The runtime app on Bun: `Bun.serve` calls the handlers with `(request, server)`; the handler reads the
 * client's address from the server. Prints `listening <port>` once it accepts connections.
 */
import { runtimeApp } from './runtime-app.js';

// Bun's global, as much of it as this file uses (no Bun types are installed for the Node type-check).
declare const Bun: {
  serve(options: {
    port: number;
    hostname: string;
    fetch: (request: Request, server: BunServer) => Promise<Response>;
  }): { readonly port: number };
};
interface BunServer {
  requestIP(request: Request): { readonly address: string } | null;
}

const app = runtimeApp((request, server) => (server as BunServer).requestIP(request)?.address);
const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request, bun) => app(request, bun) });
console.log(`listening ${server.port}`);
