/**
 * @module `oncely/node`: Idempotency-Key handling for plain `node:http` handlers, a wrapper over the Node response
 * capture that reads and fingerprints the body and hands it to the handler with the context.
 */
// This file's declarations use Node's types (Buffer, node:*): the directive, kept in its .d.ts, loads @types/node
// for users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidOptionsError } from '../core/errors.js';
import { wholeNumber } from '../core/validate.js';
import { answerForError } from './answers.js';
import type { IdempotencyContext } from './context.js';
import { rejected } from './diagnostics.js';
import { HttpIdempotency } from './flow.js';
import { parseJsonBody } from './json-body.js';
import { writeAnswer } from './node/answer.js';
import type { ResponseCapture } from './node/capture.js';
import { NodeExchange } from './node/exchange.js';
import { nodeView, readBody } from './node/request.js';
import { operationStatus } from './operation-status.js';
import { checkOptionNames, createShared, type HttpIdempotencyOptions, resolveRoute } from './options.js';
import { problemAnswer } from './problem.js';

export type { IdempotencyContext } from './context.js';

export interface NodeIdempotencyOptions extends HttpIdempotencyOptions<IncomingMessage> {
  /**
   * Largest request body the wrapper reads (it needs the bytes for the fingerprint). Larger requests get 413
   * and no record. Default 1,048,576 bytes.
   */
  readonly maxRequestBytes?: number;
}

export interface NodeRequestExtras {
  /** The body, read by the wrapper for the methods it handles; undefined for other methods (read `req` yourself). */
  readonly body: Buffer | undefined;
  /** The layer's context while this request owns its key; undefined when the request passed through. */
  readonly idempotency: IdempotencyContext | undefined;
}

export type NodeHandler = (req: IncomingMessage, res: ServerResponse, extras: NodeRequestExtras) => unknown;
export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

export interface NodeIdempotency {
  /** Wraps a `node:http` request handler. */
  (handler: NodeHandler): NodeListener;
  /** Answers `GET <longRunning.location(id)>`: 202 while running, then the stored response. */
  status(req: IncomingMessage, res: ServerResponse, id: string): Promise<void>;
}

/**
 * Idempotency-Key handling for plain `node:http` handlers: the first request with a key runs the handler, its
 * response is stored before it is sent, and retries replay it byte for byte with `Idempotent-Replayed: true`.
 * The wrapper reads the body of the methods it handles (to fingerprint it) and hands it to the handler.
 *
 * @example
 * import { createServer } from 'node:http';
 * import { idempotency } from 'oncely/node';
 *
 * const idem = idempotency({ store: new RedisStore({ client }) });
 * createServer(
 *   idem(async (req, res, { body, idempotency }) => {
 *     const payment = await charge(JSON.parse(String(body)), idempotency?.token);
 *     res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(payment));
 *   }),
 * ).listen(3000);
 */
export function idempotency(options: NodeIdempotencyOptions): NodeIdempotency {
  checkOptionNames('node', options, ['maxRequestBytes']);
  const { maxRequestBytes: limit, ...rest } = options;
  const maxRequestBytes = wholeNumber('maxRequestBytes', limit, 1024 * 1024, { min: 0 });
  const shared = createShared('node', rest);
  const route = resolveRoute('node', rest, shared.engine, shared.scopeNotices);
  const flow = new HttpIdempotency<IncomingMessage>(shared, route);

  const wrap = (handler: NodeHandler): NodeListener => {
    if (typeof handler !== 'function')
      throw new InvalidOptionsError('oncely/node: wrap a function (req, res, extras) => …');
    return function idempotentListener(req, res) {
      if (!flow.handles(req.method ?? 'GET')) {
        return void invoke(handler, req, res, { body: undefined, idempotency: undefined });
      }
      void handle(flow, handler, req, res, maxRequestBytes);
    };
  };
  const status = async (_req: IncomingMessage, res: ServerResponse, id: string) => {
    writeAnswer(res, await operationStatus(shared, route, id));
  };
  return Object.assign(wrap, { status });
}

async function handle(
  flow: HttpIdempotency<IncomingMessage>,
  handler: NodeHandler,
  req: IncomingMessage,
  res: ServerResponse,
  maxRequestBytes: number,
): Promise<void> {
  let body: Buffer | undefined;
  try {
    body = await readBody(req, maxRequestBytes);
  } catch {
    return; // the client went away mid-body; there is nobody to answer.
  }
  if (body === undefined) {
    const answer = problemAnswer('body-too-large', `the body exceeds ${maxRequestBytes} bytes`);
    return writeAnswer(res, rejected('body-too-large', answer, req.method ?? 'POST', undefined));
  }
  const contentType = req.headers['content-type'];
  const view = nodeView(req, undefined, req.url ?? '/', body, undefined);
  let capture: ResponseCapture | undefined;
  let start: Awaited<ReturnType<typeof flow.start>>;
  try {
    start = await flow.start(
      view,
      (answer) => {
        capture?.restore();
        writeAnswer(res, answer, true);
      },
      () => parseJsonBody(contentType, body) === 'unparseable',
    );
  } catch (error) {
    return failed(res, error);
  }
  if (start.kind === 'pass') return void invoke(handler, req, res, { body, idempotency: undefined });
  if (start.kind === 'answer') return writeAnswer(res, start.answer);
  const exchange = new NodeListenerExchange(start, res);
  capture = exchange.capture;
  invoke(handler, req, res, { body, idempotency: start.context }).catch((error: unknown) =>
    start.fail(error).then((finish) => exchange.deliver(finish)),
  );
}

/** The wrapper's exchange: an error is reported and answered as a problem (500 unless the layer has its own). */
class NodeListenerExchange extends NodeExchange {
  protected rejected(error: unknown): void {
    failed(this.res, error);
  }

  protected answerError(error: unknown): void {
    failed(this.res, error);
  }
}

async function invoke(
  handler: NodeHandler,
  req: IncomingMessage,
  res: ServerResponse,
  extras: NodeRequestExtras,
) {
  return handler(req, res, extras);
}

/** The handler (or a user function) threw: 500, never stored, and the error is reported like Express does. */
function failed(res: ServerResponse, error: unknown): void {
  console.error(error);
  writeAnswer(
    res,
    answerForError(error) ??
      problemAnswer('handler-failed', 'the request handler failed; nothing was stored'),
    true,
  );
}
