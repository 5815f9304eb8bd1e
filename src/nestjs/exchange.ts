// This file's declarations use Node's types (node:http): the directive, kept in its .d.ts, loads @types/node for
// users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import {
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  ServerResponse,
} from 'node:http';
import type { HeaderPairs } from '../core/store.js';
import { headerLines } from '../http/key-header.js';
import { groupHeaders, headerPairs } from '../http/node-headers.js';
import { nodeView, readBody } from '../http/node-view.js';
import type { RequestView } from '../http/scope.js';

/**
 * Nest's request object as a `scope` or `fingerprint` function gets it: Express's `Request` on
 * `@nestjs/platform-express`, Fastify's `FastifyRequest` on `@nestjs/platform-fastify`. Both carry these fields;
 * anything else your middleware or guards set (`user`, a tenant) is there too, as `unknown` until you say what it is
 * (`OncelyModule.forRoot<Request>(…)` types it as your platform's request).
 */
export interface NestRequest {
  readonly method?: string;
  readonly url?: string;
  readonly headers: IncomingHttpHeaders;
  readonly body?: unknown;
  readonly [field: string]: unknown;
}

/**
 * One request as the interceptor drives it, on either platform. Both platforms write the response through Node's
 * `ServerResponse` (`raw`): that is where the layer holds the response back until it is stored, as `oncely/express`
 * and `oncely/node` do, so Nest's serialization, exception filters and outer interceptors all end up in what is
 * stored and replayed.
 */
export interface Exchange<Req> {
  readonly view: RequestView<Req>;
  readonly raw: ServerResponse;
  /** The response's headers so far. Fastify keeps a reply's own headers apart until it sends them. */
  headers(): HeaderPairs;
  /** Route parameters (`:id` of the status route). */
  readonly params: Readonly<Record<string, unknown>> | undefined;
}

/** What oncely reads of an Express request (the Express platform). */
interface ExpressRequest extends IncomingMessage {
  body?: unknown;
  /** Set by `NestFactory.create(…, { rawBody: true })`: the exact bytes, preferred for the fingerprint. */
  rawBody?: unknown;
  baseUrl?: string;
  originalUrl?: string;
  route?: { path?: unknown };
  params?: Record<string, unknown>;
  _body?: boolean;
}

/** What oncely reads of a Fastify request and reply (the Fastify platform). */
interface FastifyRequest {
  readonly raw: IncomingMessage;
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body?: unknown;
  readonly rawBody?: unknown;
  readonly params?: Record<string, unknown>;
  readonly routeOptions?: { readonly url?: string };
}
interface FastifyReply {
  readonly raw: ServerResponse;
  getHeaders(): OutgoingHttpHeaders;
}

// What the Express platform reads of a body no parser took (text/plain without `useBodyParser('text')`): up to
// this size, as oncely/express does; a larger one is fingerprinted by its media type alone.
const OWN_BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * The exchange of a request on Nest's Express or Fastify platform; undefined on anything else (the interceptor
 * then refuses the request rather than run it unprotected). Reads a body no parser read, so it can be fingerprinted.
 */
export async function exchangeOf<Req>(request: Req, response: unknown): Promise<Exchange<Req> | undefined> {
  if (response instanceof ServerResponse) return expressExchange(request as Req & ExpressRequest, response);
  if (isFastifyReply(response)) return fastifyExchange(request as Req & FastifyRequest, response);
  return undefined;
}

function isFastifyReply(value: unknown): value is FastifyReply {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { raw?: unknown }).raw instanceof ServerResponse &&
    typeof (value as { getHeaders?: unknown }).getHeaders === 'function'
  );
}

async function expressExchange<Req>(
  request: Req & ExpressRequest,
  raw: ServerResponse,
): Promise<Exchange<Req>> {
  if (request.rawBody === undefined && hasUnreadBody(request)) {
    const body = await readBody(request, OWN_BODY_LIMIT_BYTES);
    if (body !== undefined) request.rawBody = body;
    // body-parser skips requests marked read; a parser that ran later would wait for bytes already taken.
    request._body = true;
  }
  const bytes = request.rawBody instanceof Uint8Array ? request.rawBody : undefined;
  const path = request.route?.path;
  const route = typeof path === 'string' ? `${request.baseUrl ?? ''}${path}` : undefined;
  return {
    view: nodeView(
      request,
      route,
      request.originalUrl ?? request.url ?? '/',
      bytes,
      bytes ? undefined : request.body,
    ),
    raw,
    headers: () => headerPairs(raw.getHeaders()),
    params: request.params,
  };
}

function fastifyExchange<Req>(request: Req & FastifyRequest, reply: FastifyReply): Exchange<Req> {
  const bytes = request.rawBody instanceof Uint8Array ? request.rawBody : undefined;
  return {
    view: {
      request,
      method: request.method,
      route: request.routeOptions?.url,
      target: request.url,
      header: (name) => {
        const value = request.headers[name];
        return Array.isArray(value) ? value.join(', ') : value;
      },
      repeated: (name) => headerLines(request.raw.rawHeaders, name) > 1,
      bodyBytes: bytes ?? (Buffer.isBuffer(request.body) ? request.body : undefined),
      parsedBody: bytes ? undefined : request.body,
    },
    raw: reply.raw,
    // The reply's own headers (Nest's @Header(), hooks' reply.header()) and those set on the raw response.
    headers: () => headerPairs(reply.getHeaders()),
    params: request.params,
  };
}

function hasUnreadBody(request: ExpressRequest): boolean {
  if (request.readableEnded || request._body) return false;
  const length = request.headers['content-length'];
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
}

/** Puts the response's headers back to `headers` (what they were when the layer got the request). */
export function resetHeaders(raw: ServerResponse, headers: HeaderPairs): void {
  for (const name of raw.getHeaderNames()) raw.removeHeader(name);
  for (const [name, values] of groupHeaders(headers))
    raw.setHeader(name, values.length === 1 ? values[0]! : values);
}
