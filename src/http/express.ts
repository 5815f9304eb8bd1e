/**
 * @module `oncely/express`: Idempotency-Key middleware for Express 4 and 5, a shell over the Node response capture;
 * the context in `res.locals.idempotency`, and a status route for deferred operations.
 */
// This file's declarations use Node's types (Buffer, node:*): the directive, kept in its .d.ts, loads @types/node
// for users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { IdempotencyContext } from './context.js';
import { rejected } from './diagnostics.js';
import { HttpIdempotency, type Running } from './flow.js';
import { writeAnswer } from './node/answer.js';
import type { ResponseCapture } from './node/capture.js';
import { NodeExchange } from './node/exchange.js';
import { type ExpressRequestFields, expressView, readUnparsedBody, routeOf } from './node/request.js';
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

interface ExpressResponseFields extends ServerResponse {
  locals: { idempotency?: IdempotencyContext };
}

export type ExpressNext = (error?: unknown) => void;
export type ExpressMiddleware = (req: ExpressRequest, res: ExpressResponse, next: ExpressNext) => void;

export interface ExpressIdempotency extends ExpressMiddleware {
  /** The status route of long-running requests: mount as `app.get('/operations/:id', idem.status)`. */
  readonly status: ExpressMiddleware;
}

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
  const reading = readUnparsedBody(req);
  if (reading !== undefined) {
    if ((await reading) === 'too-large') {
      const answer = problemAnswer('body-too-large', 'the body exceeds 1,048,576 bytes');
      return writeAnswer(res, rejected('body-too-large', answer, req.method ?? 'POST', routeOf(req)));
    }
    // Where a handler finds it, as a parser would have left it.
    if (req.body === undefined) req.body = req.rawBody;
  }
  const view = expressView(req);
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
