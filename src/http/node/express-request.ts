/**
 * @module An Express-style request as the layer reads it (Express, and Nest on its Express platform): the fields
 * Express and its body parsers set, the route template, the flow's view, and the read of a body no parser took.
 */
// This file's declarations use Node's types (Buffer, node:*): the directive, kept in its .d.ts, loads @types/node
// for users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import type { IncomingMessage } from 'node:http';
import type { RequestView } from '../scope.js';
import { readBody } from './body.js';
import { nodeView } from './view.js';

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
