// This file's declarations use Node's types (Buffer, node:*): the directive, kept in its .d.ts, loads @types/node
// for users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { IdempotencyContext } from './context.js';
import { rejected } from './diagnostics.js';
import { HttpIdempotency, type Running } from './flow.js';
import { NodeExchange } from './node-exchange.js';
import { type ResponseCapture, writeAnswer } from './node-response.js';
import { nodeView, readBody } from './node-view.js';
import { operationStatus } from './operation-status.js';
import { checkOptionNames, createShared, type HttpIdempotencyOptions, resolveRoute } from './options.js';
import { problemAnswer } from './problem.js';

export type { IdempotencyContext } from './context.js';

declare global {
  namespace Express {
    interface Locals {
      /** Set by oncely/express while the request owns its idempotency key. */
      idempotency?: IdempotencyContext;
    }
  }
}

/**
 * The request and response types of the middleware's signature: Node's own, so that Express infers its usual
 * types (`req.body: any`, `res.locals`) for the handlers mounted after it, Express 4 and 5 alike. The fields the
 * middleware reads are declared on `ExpressRequestFields` and read through a cast.
 */
export type ExpressRequest = IncomingMessage;
export type ExpressResponse = ServerResponse;

/** What the middleware reads of an Express request. */
interface ExpressRequestFields extends IncomingMessage {
  body?: unknown;
  /** Set by `express.json({ verify })` style hooks: the exact bytes, preferred for the fingerprint. */
  rawBody?: unknown;
  baseUrl?: string;
  originalUrl?: string;
  route?: { path?: unknown };
  params?: { id?: unknown };
}

interface ExpressResponseFields extends ServerResponse {
  locals: { idempotency?: IdempotencyContext };
}

export type ExpressNext = (error?: unknown) => void;
export type ExpressMiddleware = (req: ExpressRequest, res: ExpressResponse, next: ExpressNext) => void;

export interface ExpressIdempotency extends ExpressMiddleware {
  /** The status route of long-running requests: mount as `app.get('/operations/:id', idem.status)`. */
  readonly status: ExpressMiddleware;
}

// An Express app without a body parser before this middleware: it reads the body itself, up to this size.
const OWN_BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * Idempotency-Key middleware for Express 4 and 5. Mount it on the routes that change state, after the body
 * parser. The first request with a key runs the route, its response (`res.json`, `res.send`, `res.end`,
 * streams) is stored before the client sees it, and retries replay it byte for byte with
 * `Idempotent-Replayed: true`. The handler finds the context in `res.locals.idempotency`.
 *
 * @example
 * import express from 'express';
 * import { idempotency } from 'oncely/express';
 *
 * const app = express();
 * app.use(express.json());
 * app.post('/payments', idempotency({ store: new RedisStore({ client }) }), async (req, res) => {
 *   const payment = await charge(req.body, res.locals.idempotency?.token);
 *   res.status(201).json(payment);
 * });
 */
export function idempotency(options: HttpIdempotencyOptions<ExpressRequest>): ExpressIdempotency {
  checkOptionNames('express', options);
  const shared = createShared('express', options);
  const route = resolveRoute('express', options, shared.engine, shared.scopeNotices);
  const flow = new HttpIdempotency<ExpressRequest>(shared, route);

  function idempotencyMiddleware(req: ExpressRequest, res: ExpressResponse, next: ExpressNext): void {
    if (flow.handles(req.method ?? 'GET')) {
      handle(flow, req as ExpressRequestFields, res as ExpressResponseFields, next).catch(next);
    } else next();
  }
  function idempotencyStatus(req: ExpressRequest, res: ExpressResponse, next: ExpressNext): void {
    const id = (req as ExpressRequestFields).params?.id;
    operationStatus(shared, route, typeof id === 'string' ? id : undefined).then(
      (answer) => writeAnswer(res, answer),
      next,
    );
  }
  return Object.assign(idempotencyMiddleware, { status: idempotencyStatus });
}

async function handle(
  flow: HttpIdempotency<ExpressRequest>,
  req: ExpressRequestFields,
  res: ExpressResponseFields,
  next: ExpressNext,
) {
  if (req.rawBody === undefined && hasUnreadBody(req)) {
    // No parser read this body (none mounted before, or none matched its type): read it here, so it can be
    // fingerprinted, and leave it where a handler finds it.
    const body = await readBody(req, OWN_BODY_LIMIT_BYTES);
    if (body === undefined) {
      const answer = problemAnswer('body-too-large', 'the body exceeds 1,048,576 bytes');
      return writeAnswer(res, rejected('body-too-large', answer, req.method ?? 'POST', routeOf(req)));
    }
    req.rawBody = body;
    if (req.body === undefined) req.body = body;
    // body-parser skips requests marked read; without the mark a parser mounted later would wait forever.
    (req as { _body?: boolean })._body = true;
  }
  const raw = req.rawBody;
  const bytes = raw instanceof Uint8Array ? raw : undefined;
  const view = nodeView(
    req,
    routeOf(req),
    req.originalUrl ?? req.url ?? '/',
    bytes,
    bytes ? undefined : req.body,
  );
  let capture: ResponseCapture | undefined;
  const start = await flow.start(view, (answer) => {
    capture?.restore();
    writeAnswer(res, answer, true);
  });
  if (start.kind === 'pass') return next();
  if (start.kind === 'answer') return writeAnswer(res, start.answer);
  res.locals.idempotency = start.context;
  capture = new ExpressExchange(start, res, next).capture;
  next();
}

/** Express turns a handler's error into a 500 response, so every ending arrives as a response. */
class ExpressExchange extends NodeExchange {
  readonly #next: ExpressNext;

  constructor(running: Running<void>, res: ServerResponse, next: ExpressNext) {
    super(running, res);
    this.#next = next;
  }

  protected rejected(error: unknown): void {
    this.#next(error);
  }

  protected answerError(): void {
    this.capture.answer(problemAnswer('handler-failed', 'the request failed; nothing was stored'));
  }
}

/** The route template when the middleware is mounted on a route (`app.post('/orders/:id', idem, …)`). */
function routeOf(req: ExpressRequestFields): string | undefined {
  const path = req.route?.path;
  return typeof path === 'string' ? `${req.baseUrl ?? ''}${path}` : undefined;
}

function hasUnreadBody(req: ExpressRequestFields): boolean {
  if (req.readableEnded || (req as { _body?: boolean })._body) return false;
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}
