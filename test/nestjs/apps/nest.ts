import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import {
  Body,
  Controller,
  Get,
  HttpCode,
  type INestApplication,
  Inject,
  Module,
  Param,
  Post,
  Res,
  StreamableFile,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  IdempotencyClaim,
  type IdempotencyContext,
  IdempotencyStatus,
  Idempotent,
  OncelyModule,
} from '../../../src/nestjs/index.js';
import {
  type AdapterHarness,
  injectClient,
  socketClient,
  type TestRequest,
  type TestResponse,
} from '../../http/support/harness.js';
import { binaryBody, type Counters, type Gates, LARGE_PAD } from '../../http/support/routes.js';

/** What a handler needs of the test: how often it ran, and the gates that hold it mid-flight. */
export const FIXTURE = Symbol('fixture');
interface Fixture {
  readonly counters: Counters;
  readonly gates: Gates;
}

/** What both platforms' responses have (Express's `Response`, Fastify's `FastifyReply`) that the routes use. */
interface Reply {
  status(code: number): unknown;
  header(name: string, value: string | string[]): unknown;
}

/**
 * The suite's routes (test/http/support/routes.ts) as a Nest controller, in Nest's idiom: return values serialized
 * by Nest, `@HttpCode`, `StreamableFile`, thrown errors turned into responses by Nest's exception filter, the claim
 * through `@IdempotencyClaim()`. `@Idempotent()` on the class opts every route in; GET passes through. The same
 * class runs on both platforms. (esbuild emits no decorator metadata: dependencies are injected by token.)
 */
@Controller()
@Idempotent()
export class SuiteController {
  constructor(@Inject(FIXTURE) private readonly fixture: Fixture) {}

  @Post('payments')
  payments(
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: Reply,
    @IdempotencyClaim() claim?: IdempotencyContext,
  ) {
    const n = this.fixture.counters.bump('payments', claim?.key);
    reply.header('x-handler', 'yes');
    reply.header('cache-control', 'private');
    reply.header('set-cookie', ['session=abc; Path=/', 'theme=dark; Path=/']);
    return { id: randomUUID(), n, body };
  }

  @Post('text')
  @HttpCode(200)
  text(@Res({ passthrough: true }) reply: Reply, @IdempotencyClaim() claim?: IdempotencyContext) {
    reply.header('content-type', 'text/plain');
    return `hello ${this.fixture.counters.bump('text', claim?.key)}`;
  }

  @Post('binary')
  @HttpCode(200)
  binary(@IdempotencyClaim() claim?: IdempotencyContext) {
    const bytes = binaryBody(this.fixture.counters.bump('binary', claim?.key));
    return new StreamableFile(bytes, { type: 'application/octet-stream' });
  }

  @Post('stream')
  @HttpCode(200)
  stream(@IdempotencyClaim() claim?: IdempotencyContext) {
    const n = this.fixture.counters.bump('stream', claim?.key);
    const chunks = [Buffer.from('part1-'), Buffer.from('part2-'), Buffer.from(String(n))];
    return new StreamableFile(Readable.from(chunks), { type: 'text/plain' });
  }

  @Post('empty')
  @HttpCode(204)
  empty(@IdempotencyClaim() claim?: IdempotencyContext) {
    this.fixture.counters.bump('empty', claim?.key);
  }

  @Post('status/:code')
  status(
    @Param('code') code: string,
    @Res({ passthrough: true }) reply: Reply,
    @IdempotencyClaim() claim?: IdempotencyContext,
  ) {
    const n = this.fixture.counters.bump('status', claim?.key);
    reply.status(Number(code));
    return { n };
  }

  @Post('fail-once')
  failOnce(@Res({ passthrough: true }) reply: Reply, @IdempotencyClaim() claim?: IdempotencyContext) {
    const n = this.fixture.counters.bump('fail-once', claim?.key);
    reply.status(n === 1 ? 500 : 201);
    return { n };
  }

  @Post('throw')
  throwOnce(@IdempotencyClaim() claim?: IdempotencyContext) {
    const n = this.fixture.counters.bump('throw', claim?.key);
    if (n === 1) throw new Error('boom');
    return { n };
  }

  @Post('skip')
  skip(@IdempotencyClaim() claim?: IdempotencyContext) {
    const n = this.fixture.counters.bump('skip', claim?.key);
    claim?.skipStorage();
    return { n };
  }

  @Post('large')
  large(@IdempotencyClaim() claim?: IdempotencyContext) {
    return { n: this.fixture.counters.bump('large', claim?.key), pad: LARGE_PAD };
  }

  @Post('slow')
  async slow(@IdempotencyClaim() claim?: IdempotencyContext) {
    const key = claim!.key;
    const n = this.fixture.counters.bump('slow', key);
    this.fixture.gates.arrived.add(key);
    await this.fixture.gates.wait(key);
    return { n, id: randomUUID() };
  }

  @Post('defer')
  defer(@IdempotencyClaim() claim: IdempotencyContext) {
    const n = this.fixture.counters.bump('defer', claim.key);
    return claim.defer(async () => {
      await this.fixture.gates.wait(claim.key);
      return { status: 201, json: { n } };
    });
  }

  @Get('operations/:id')
  @IdempotencyStatus()
  operation() {}

  @Get('payments')
  list() {
    return { n: this.fixture.counters.bump('get-payments', undefined) };
  }
}

export type Platform = 'express' | 'fastify';

/** A running test app (typed by hand: the inferred type names the platform's own copy of Fastify). */
export interface NestApp {
  readonly app: INestApplication;
  readonly port: number;
  request(request: TestRequest): Promise<TestResponse>;
}

/** A Nest application of `controllers` on `platform`, with oncely's module on `options`, listening on loopback. */
export async function createNestApp(
  platform: Platform,
  options: Record<string, unknown>,
  fixture: Fixture,
  controllers: (new (...args: never[]) => unknown)[] = [SuiteController],
): Promise<NestApp> {
  @Module({
    imports: [OncelyModule.forRoot(options as never)],
    controllers,
    providers: [{ provide: FIXTURE, useValue: fixture }],
  })
  class AppModule {}

  // abortOnError: false, so a module that fails to initialize rejects here (Nest's default aborts the process).
  const common = { logger: false, abortOnError: false } as const;
  if (platform === 'express') {
    // The exact bytes for the fingerprint (rawBody), and parsers for the suite's text and binary bodies.
    const app = await NestFactory.create<NestExpressApplication>(AppModule, { ...common, rawBody: true });
    app.useBodyParser('text');
    app.useBodyParser('raw', { type: 'application/octet-stream' });
    // Per-request headers of middleware before the layer: a request id and CORS, as cors() sets them.
    app.use((req: { headers: Record<string, string | undefined> }, res: Reply, next: () => void) => {
      res.header('x-request-id', randomUUID());
      res.header('cache-control', 'no-store');
      if (req.headers.origin) res.header('access-control-allow-origin', req.headers.origin);
      next();
    });
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as AddressInfo;
    return { app, port, request: socketClient(`http://127.0.0.1:${port}`) };
  }
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), common);
  // Without rawBody: the parsed body stands in for the bytes, as on Fastify by default.
  app.useBodyParser('application/octet-stream');
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', randomUUID()).header('cache-control', 'no-store');
    if (request.headers.origin) reply.header('access-control-allow-origin', request.headers.origin);
  });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return {
    app,
    port,
    // In process, with inject(), as the Fastify adapter's suite runs; the socket is for raw header lines.
    request: injectClient(fastify),
  };
}

/** The suite's app on Nest: Express platform over a socket with raw bytes, Fastify platform in process. */
export function nestHarness(platform: Platform): AdapterHarness {
  return {
    name: `nestjs (${platform})`,
    rawBytes: platform === 'express',
    async build({ options, counters, gates }) {
      const { app, port, request } = await createNestApp(platform, options, { counters, gates });
      return {
        port,
        request,
        close: async () => {
          (app.getHttpServer() as { closeAllConnections?: () => void }).closeAllConnections?.();
          await app.close();
        },
      };
    },
  };
}
