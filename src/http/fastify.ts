/**
 * @module The Fastify adapter (`oncely/fastify`): a plugin whose routes opt in through `config.idempotency`, the
 * request fingerprinted in `preHandler` (after the body is parsed) and the response captured in `onSend`.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import type {
  FastifyInstance,
  FastifyPluginCallback,
  FastifyReply,
  FastifyRequest,
  onResponseHookHandler,
  onSendHookHandler,
  preHandlerHookHandler,
} from 'fastify';
import fp from 'fastify-plugin';
import { InvalidOptionsError } from '../core/errors.js';
import { knownOptions } from '../core/validate.js';
import type { IdempotencyContext } from './context.js';
import { payloadBytes, payloadInMemory } from './fastify-payload.js';
import { HttpIdempotency, type Running } from './flow.js';
import { groupHeaders, headerPairs } from './header-pairs.js';
import { headerLines } from './key-header.js';
import { isEventStream } from './media-type.js';
import { operationStatus } from './operation-status.js';
import {
  checkOptionNames,
  createShared,
  type HttpIdempotencyOptions,
  ROUTE_OPTION_NAMES,
  type RouteOptions,
  resolveRoute,
} from './options.js';
import type { HttpAnswer } from './problem.js';
import type { RequestView } from './scope.js';

export type { IdempotencyContext } from './context.js';

// Named apart: inside the augmentation below, `RouteOptions` would be Fastify's own once another plugin augments it.
type OncelyRouteOptions = RouteOptions<FastifyRequest>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Opt this route in to oncely (`true`), optionally with its own route options. (`& object`: Fastify infers a
     * route's config type from the literal and intersects it with this one; route options alone are all optional,
     * and `'yes' & RouteOptions` would be a valid type, so a string or a number passed the check. `& object` makes
     * that intersection `never`, and the wrong value an error.)
     */
    idempotency?: boolean | (OncelyRouteOptions & object);
  }
  interface FastifyRequest {
    /** oncely's context while this request owns its idempotency key; null otherwise. */
    idempotency: IdempotencyContext<FastifyReply> | null;
  }
  interface FastifyInstance {
    /** The status route of long-running requests: `fastify.get('/operations/:id', fastify.idempotencyStatus)`. */
    idempotencyStatus: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;
  }
}

export type FastifyIdempotencyOptions = HttpIdempotencyOptions<FastifyRequest>;

// Per-request state, on a decorated symbol so request objects keep one shape.
const STATE = Symbol('oncely.state');
/** The layer answered this request itself (replay, problem, 202): its onSend must leave the payload alone. */
const ANSWERED = 1;
/** The handler's response went through onSend already. */
const DONE = 2;
type State = Running<FastifyReply> | typeof ANSWERED | typeof DONE | null;
type WithState = FastifyRequest & { [STATE]: State };

const plugin: FastifyPluginCallback<FastifyIdempotencyOptions> = (fastify, options, done) => {
  // A callback plugin that throws takes the process down; bad options must reject `register` instead.
  try {
    setUp(fastify, options);
  } catch (error) {
    return done(error as Error);
  }
  done();
};

function setUp(fastify: FastifyInstance, options: FastifyIdempotencyOptions): void {
  checkOptionNames('fastify', options);
  const shared = createShared('fastify', options);
  const base = resolveRoute('fastify', options, shared.engine, shared.scopeNotices);
  fastify.decorateRequest('idempotency', null);
  fastify.decorateRequest(STATE as unknown as string, null);
  fastify.decorate(
    'idempotencyStatus',
    async function idempotencyStatus(request: FastifyRequest, reply: FastifyReply) {
      return send(
        reply,
        await operationStatus(shared, base, (request.params as { id?: string } | undefined)?.id),
      );
    },
  );

  fastify.addHook('onRoute', (routeOptions) => {
    const config = routeOptions.config?.idempotency;
    if (config === undefined || config === false) return;
    if (config !== true && (config === null || typeof config !== 'object')) {
      throw new InvalidOptionsError(
        `route ${routeOptions.url}: config.idempotency must be true or route options`,
      );
    }
    if (config !== true)
      knownOptions(`route ${routeOptions.url} config.idempotency`, config, ROUTE_OPTION_NAMES);
    const route = config === true ? base : resolveRoute('fastify', config, base);
    const flow = new HttpIdempotency<FastifyRequest>(shared, route);
    routeOptions.preHandler = [...hooks(routeOptions.preHandler), preHandlerFor(flow)];
    // First among the route's onSend hooks, so what is stored is what the handler produced: hooks after it (such as
    // @fastify/compress, whatever the registration order) transform the first answer and each replay alike.
    routeOptions.onSend = [captureOnSend, ...hooks(routeOptions.onSend)];
    routeOptions.onResponse = [...hooks(routeOptions.onResponse), releaseUnsent];
  });
}

/**
 * Idempotency-Key handling for Fastify 5, as a plugin: routes opt in with `config: { idempotency: true }` (or
 * route options). The key and fingerprint are checked in `preHandler` (the body is parsed by then), the
 * response is captured in `onSend` (serialized payloads, Buffers and streams) and stored before it is sent.
 *
 * @example
 * import Fastify from 'fastify';
 * import { idempotency } from 'oncely/fastify';
 *
 * const app = Fastify();
 * await app.register(idempotency, { store: new RedisStore({ client }) });
 * app.post('/payments', { config: { idempotency: true } }, async (request, reply) => {
 *   reply.code(201);
 *   return charge(request.body, request.idempotency?.token);
 * });
 */
export const idempotency = fp(plugin, { fastify: '5.x', name: 'oncely-idempotency' });
export default idempotency;

function preHandlerFor(flow: HttpIdempotency<FastifyRequest>): preHandlerHookHandler {
  // A promise chain rather than an async function: one promise less on every request.
  return function oncelyPreHandler(request, reply) {
    const accept = (answer: HttpAnswer) => {
      (request as WithState)[STATE] = ANSWERED;
      return send(reply, answer);
    };
    return flow.start(viewOf(request), accept).then((start) => {
      if (start.kind === 'pass') return undefined;
      if (start.kind === 'answer') return accept(start.answer);
      (request as WithState)[STATE] = start;
      request.idempotency = start.context;
      start.handOver(headerPairs(reply.getHeaders() as OutgoingHttpHeaders));
      return undefined;
    });
  };
}

// A callback hook: for a payload held in memory (nearly every response) the only wait is the store's, and an async
// hook would add its own promise and tick on every response.
const captureOnSend: onSendHookHandler = function oncelyOnSend(request, reply, payload, done) {
  const state = (request as WithState)[STATE];
  if (state === null || typeof state === 'number') return done(null, payload);
  (request as WithState)[STATE] = DONE;
  const held = payloadInMemory(payload);
  const settled =
    held !== undefined
      ? stored(state, reply, payload, held)
      : payloadBytes(payload, state.holdLimit, isEventStream(reply.getHeader('content-type'))).then(
          (read) => {
            if (Buffer.isBuffer(read)) return stored(state, reply, payload, read);
            // Past the cap in pieces, or an event stream: it goes out as it comes, not stored; the key is released when
            // the connection is done with it ('close' fires when it finished and when it was cut short).
            state.streaming(read.eventStream);
            reply.raw.once('close', () => void state.ended());
            return read.stream;
          },
        );
  settled.then((sent) => done(null, sent), done);
};

/** Stores the handler's response whole; what goes out is the handler's payload, or the layer's answer instead. */
function stored(
  state: Running<FastifyReply>,
  reply: FastifyReply,
  payload: unknown,
  body: Buffer,
): Promise<unknown> {
  const response = {
    status: reply.statusCode,
    headers: headerPairs(reply.getHeaders() as OutgoingHttpHeaders),
    body,
  };
  return state.respond(response).then((finish) => {
    if (finish.kind === 'send' && !finish.original) {
      for (const name of Object.keys(reply.getHeaders())) reply.removeHeader(name);
      reply.code(finish.answer.status);
      setHeaders(reply, finish.answer);
      return Buffer.from(finish.answer.body);
    }
    // An error cannot reach here (Fastify turns a thrown handler error into a 500 payload first).
    return typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : body;
  });
}

/** A reply that never passed onSend (hijacked, or the connection died first) gives its key up. */
// A callback hook, not an async one: it runs on every response, and Fastify's promise handling of an async hook
// is a cost for nothing when there is nothing to wait for.
const releaseUnsent: onResponseHookHandler = function oncelyOnResponse(request, _reply, done) {
  const state = (request as WithState)[STATE];
  if (state !== null && typeof state !== 'number') {
    (request as WithState)[STATE] = DONE;
    void state.fail(new Error('oncely/fastify: the reply was sent without passing onSend (hijacked?)'));
  }
  done();
};

function viewOf(request: FastifyRequest): RequestView<FastifyRequest> {
  return new FastifyRequestView(request);
}

// A class rather than an object literal with two closures: one object per request.
class FastifyRequestView implements RequestView<FastifyRequest> {
  readonly method: string;
  readonly route: string | undefined;
  readonly target: string;
  readonly bodyBytes: Uint8Array | undefined;
  readonly parsedBody: unknown;
  readonly headers: FastifyRequest['headers'];

  constructor(readonly request: FastifyRequest) {
    const body = request.body;
    this.headers = request.headers;
    this.method = request.method;
    this.route = request.routeOptions.url;
    this.target = request.url;
    this.bodyBytes = Buffer.isBuffer(body) ? body : undefined;
    this.parsedBody = body;
  }

  header(name: string): string | undefined {
    const value = this.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  }

  repeated(name: string): boolean {
    return headerLines(this.request.raw.rawHeaders, name) > 1;
  }
}

function send(reply: FastifyReply, answer: HttpAnswer): FastifyReply {
  reply.code(answer.status);
  setHeaders(reply, answer);
  return reply.send(Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength));
}

function setHeaders(reply: FastifyReply, answer: HttpAnswer): void {
  for (const [name, values] of groupHeaders(answer.headers))
    reply.header(name, values.length === 1 ? values[0] : values);
}

function hooks<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}
