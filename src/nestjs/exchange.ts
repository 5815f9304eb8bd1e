/**
 * @module One Nest request as the interceptor drives it on either platform: the request a `scope` or `fingerprint`
 * function sees, and the exchange over Node's `ServerResponse` where the response is held until it is stored.
 */
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
import { headerPairs } from '../http/header-pairs.js';
import { headerLines } from '../http/key-header.js';
import { type ExpressRequestFields, expressView, readUnparsedBody } from '../http/node/request.js';
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

/**
 * The exchange of a request on Nest's Express or Fastify platform; undefined on anything else (the interceptor
 * then refuses the request rather than run it unprotected). Reads a body no parser read, so it can be fingerprinted.
 */
export async function exchangeOf<Req>(request: Req, response: unknown): Promise<Exchange<Req> | undefined> {
  if (response instanceof ServerResponse)
    return expressExchange(request as Req & ExpressRequestFields, response);
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
  request: Req & ExpressRequestFields,
  raw: ServerResponse,
): Promise<Exchange<Req>> {
  // A body no parser took (text/plain without `useBodyParser('text')`) is read up to the size oncely/express reads;
  // a larger one is fingerprinted by its media type alone.
  const reading = readUnparsedBody(request);
  if (reading !== undefined) await reading;
  return {
    view: expressView(request),
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
      headers: request.headers,
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
