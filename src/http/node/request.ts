/**
 * @module A Node `IncomingMessage` as the layer reads it (node:http, Express, Nest on Express): the flow's
 * `RequestView` (headers from Node's map, repeated lines told apart by `rawHeaders`), the fields Express and its
 * body parsers set, and the bounded read of a body, including the Express-style read of one no parser took.
 */
// This file's declarations use Node's types (Buffer, node:*): the directive, kept in its .d.ts, loads @types/node
// for users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { headerLines } from '../key-header.js';
import type { RequestView } from '../scope.js';

/** A `RequestView` over a Node request; `route` when the caller knows the matched route template. */
export function nodeView<Req extends IncomingMessage>(
  request: Req,
  route: string | undefined,
  target: string,
  bodyBytes: Uint8Array | undefined,
  parsedBody: unknown,
): RequestView<Req> {
  return new NodeRequestView(request, route, target, bodyBytes, parsedBody);
}

// A class rather than an object literal with two closures: one object per request.
class NodeRequestView<Req extends IncomingMessage> implements RequestView<Req> {
  readonly method: string;
  readonly headers: IncomingHttpHeaders;

  constructor(
    readonly request: Req,
    readonly route: string | undefined,
    readonly target: string,
    readonly bodyBytes: Uint8Array | undefined,
    readonly parsedBody: unknown,
  ) {
    this.method = request.method ?? 'GET';
    this.headers = request.headers;
  }

  header(name: string): string | undefined {
    const value = this.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  }

  repeated(name: string): boolean {
    return headerLines(this.request.rawHeaders, name) > 1;
  }
}

/** What the layer reads of an Express request. */
export interface ExpressRequestFields extends IncomingMessage {
  body?: unknown;
  /**
   * The exact bytes, preferred for the fingerprint: set by `express.json({ verify })` style hooks, by Nest's
   * `rawBody: true`, or by `readUnparsedBody`.
   */
  rawBody?: unknown;
  baseUrl?: string;
  originalUrl?: string;
  route?: { path?: unknown };
  params?: Record<string, unknown>;
  /** body-parser's mark of a body it read (or that nothing is left to read). */
  _body?: boolean;
}

// An app without a body parser before the layer: it reads the body itself, up to this size.
export const OWN_BODY_LIMIT_BYTES = 1024 * 1024;

/** The route template when the layer runs on a matched route (`app.post('/orders/:id', idem, …)`). */
export function routeOf(req: ExpressRequestFields): string | undefined {
  const path = req.route?.path;
  return typeof path === 'string' ? `${req.baseUrl ?? ''}${path}` : undefined;
}

/** The flow's view of an Express request: the raw bytes when a parser kept them, the parsed body otherwise. */
export function expressView<Req extends ExpressRequestFields>(req: Req): RequestView<Req> {
  const raw = req.rawBody;
  const bytes = raw instanceof Uint8Array ? raw : undefined;
  return nodeView(req, routeOf(req), req.originalUrl ?? req.url ?? '/', bytes, bytes ? undefined : req.body);
}

/**
 * Reads a body no parser read (none mounted before, or none matched its type), so it can be fingerprinted, and
 * keeps it as `rawBody`. Undefined when there is nothing to read (a parser read it: the common case, with no
 * promise made); otherwise resolves `read`, or `too-large` past the limit (nothing kept). Either way the request is
 * marked read: body-parser skips requests so marked, and without the mark a parser that ran later would wait
 * forever for bytes already taken.
 */
export function readUnparsedBody(
  req: ExpressRequestFields,
  limit = OWN_BODY_LIMIT_BYTES,
): Promise<'read' | 'too-large'> | undefined {
  if (req.rawBody !== undefined || !hasUnreadBody(req)) return undefined;
  return readBody(req, limit).then((body) => {
    req._body = true;
    if (body === undefined) return 'too-large';
    req.rawBody = body;
    return 'read';
  });
}

function hasUnreadBody(req: ExpressRequestFields): boolean {
  if (req.readableEnded || req._body) return false;
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** Reads a request body up to `limit` bytes; undefined when it is larger (the rest is drained, not kept). */
export function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    if (Number(request.headers['content-length']) > limit) {
      request.resume();
      return resolve(undefined);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size <= limit) return void chunks.push(chunk);
      cleanup();
      request.resume();
      resolve(undefined);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
  });
}
