import type { Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Store } from '../../../src/index.js';
import { closing, listening } from '../../support/listen.js';
import type { Counters, Gates } from './routes.js';

export interface TestRequest {
  readonly method?: string;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
}

export interface TestResponse {
  readonly status: number;
  /** Lower-case names; a repeated header's values joined with ", " (set-cookie kept apart in `cookies`). */
  readonly headers: Readonly<Record<string, string>>;
  readonly cookies: readonly string[];
  readonly body: Buffer;
  json(): Record<string, unknown>;
}

export interface AppUnderTest {
  request(request: TestRequest): Promise<TestResponse>;
  close(): Promise<void>;
  /** The loopback port, where the app also listens on a real socket (for raw header lines and keep-alive). */
  readonly port?: number;
}

export interface BuildContext {
  readonly store: Store;
  /** Options for the adapter's factory, merged over the suite's defaults. */
  readonly options: Record<string, unknown>;
  readonly counters: Counters;
  readonly gates: Gates;
}

export interface AdapterHarness {
  readonly name: string;
  /** True when the adapter fingerprints the exact body bytes (node, Hono); false when the framework parsed it. */
  readonly rawBytes: boolean;
  /** True when handlers write to a Node response piece by piece (`POST /partial`): Express and node. */
  readonly partialWrites?: boolean;
  build(context: BuildContext): Promise<AppUnderTest>;
}

export function toTestResponse(status: number, headers: Headers, body: Buffer): TestResponse {
  const record: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (name !== 'set-cookie') record[name] = value;
  });
  return {
    status,
    headers: record,
    cookies: headers.getSetCookie(),
    body,
    json: () => JSON.parse(body.toString('utf8')) as Record<string, unknown>,
  };
}

/** A fetch-based client for adapters served over a real socket (Express, node:http). */
export function socketClient(baseUrl: string): (request: TestRequest) => Promise<TestResponse> {
  return async ({ method = 'POST', path, headers = {}, body }) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? null : (body as BodyInit),
    });
    return toTestResponse(response.status, response.headers, Buffer.from(await response.arrayBuffer()));
  };
}

/** An app on a real socket (`server` told to listen on loopback): requests through fetch, closed with its connections. */
export async function overSocket(server: Server): Promise<AppUnderTest & { readonly port: number }> {
  const port = await listening(server);
  return { port, request: socketClient(`http://127.0.0.1:${port}`), close: closing(server) };
}

/** A client through Fastify's `inject()`: in process, as the Fastify adapter's suite runs (Fastify, Nest on Fastify). */
export function injectClient(app: FastifyInstance): (request: TestRequest) => Promise<TestResponse> {
  return async ({ method = 'POST', path, headers = {}, body }) => {
    const response = await app.inject({
      method: method as 'POST',
      url: path,
      headers,
      ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : Buffer.from(body) }),
    });
    const fetchHeaders = new Headers();
    for (const [name, value] of Object.entries(response.headers)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value]) fetchHeaders.append(name, String(one));
    }
    return toTestResponse(response.statusCode, fetchHeaders, response.rawPayload);
  };
}
