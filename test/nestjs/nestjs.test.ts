import 'reflect-metadata';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import {
  type CanActivate,
  Controller,
  type ExecutionContext,
  HttpCode,
  Inject,
  Injectable,
  Module,
  NotFoundException,
  Post,
  Res,
  StreamableFile,
  UseGuards,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { afterEach, describe, expect, it } from 'vitest';
import { isInvalidOptionsError, MemoryStore, type Store } from '../../src/index.js';
import { exchangeOf } from '../../src/nestjs/exchange.js';
import {
  IdempotencyClaim,
  type IdempotencyContext,
  Idempotent,
  OncelyModule,
} from '../../src/nestjs/index.js';
import { defaultId, expectProblem, until } from '../http/support/fixture.js';
import { socketClient } from '../http/support/harness.js';
import { Counters, Gates } from '../http/support/routes.js';
import { createNestApp, FIXTURE, type NestApp, type Platform } from './apps/nest.js';

interface Fixture {
  readonly counters: Counters;
  readonly gates: Gates;
}

/** Lets a request through when it says `x-allow: yes`, as an auth guard would. */
@Injectable()
class AllowGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return (
      context.switchToHttp().getRequest<{ headers: Record<string, unknown> }>().headers['x-allow'] === 'yes'
    );
  }
}

/** Fastify's reply has the Node response as `raw`; Express's response is one. */
type RawReply = { readonly raw?: ServerResponse };

/** What both platforms' responses share that a `@Res()` handler uses. */
interface Reply {
  status(code: number): { send(body: unknown): unknown };
}

@Controller('nest')
@Idempotent()
class NestOnlyController {
  constructor(@Inject(FIXTURE) private readonly fixture: Fixture) {}

  // The handler's options over the controller's; the interceptor is applied twice here (class and handler).
  @Post('optional')
  @Idempotent({ required: false })
  optional(@IdempotencyClaim() claim?: IdempotencyContext) {
    return { n: this.fixture.counters.bump('optional', claim?.key), keyed: claim !== undefined };
  }

  @Post('required')
  required(@IdempotencyClaim() claim?: IdempotencyContext) {
    return { n: this.fixture.counters.bump('required', claim?.key) };
  }

  // Nest sends nothing for a handler that takes @Res() without passthrough: the layer writes its own answers.
  @Post('own-response')
  async ownResponse(@Res() reply: Reply, @IdempotencyClaim() claim: IdempotencyContext) {
    const n = this.fixture.counters.bump('own-response', claim.key);
    this.fixture.gates.arrived.add(claim.key);
    await this.fixture.gates.wait(claim.key);
    reply.status(201).send({ n, token: typeof claim.token, signal: claim.signal instanceof AbortSignal });
  }

  @Post('guarded')
  @UseGuards(AllowGuard)
  guarded(@IdempotencyClaim() claim?: IdempotencyContext) {
    return { n: this.fixture.counters.bump('guarded', claim?.key) };
  }

  @Post('not-found')
  @HttpCode(201)
  notFound(@IdempotencyClaim() claim?: IdempotencyContext): never {
    const n = this.fixture.counters.bump('not-found', claim?.key);
    throw new NotFoundException(`no order (run ${n})`);
  }

  // A header changed after part of the body was written: Node would throw, the platform closes the connection.
  @Post('broken')
  broken(@Res() reply: RawReply, @IdempotencyClaim() claim: IdempotencyContext) {
    const n = this.fixture.counters.bump('broken', claim.key);
    const raw = reply.raw ?? (reply as ServerResponse);
    raw.statusCode = 201;
    raw.setHeader('content-type', 'text/plain');
    raw.write('part-');
    if (n === 1) raw.setHeader('x-late', 'yes');
    raw.end(`done-${n}`);
  }

  // Past maxBodyBytes in pieces: sent as it is read, never stored.
  @Post('big')
  @HttpCode(200)
  big(@IdempotencyClaim() claim?: IdempotencyContext) {
    const n = this.fixture.counters.bump('big', claim?.key);
    const chunks = Array.from({ length: 20 }, (_, index) => Buffer.alloc(1024, 97 + (index % 26)));
    return new StreamableFile(Readable.from([...chunks, Buffer.from(`-${n}`)]), { type: 'text/plain' });
  }

  @Post('echo')
  echo(@IdempotencyClaim() claim?: IdempotencyContext) {
    return { n: this.fixture.counters.bump('echo', claim?.key) };
  }
}

type App = NestApp;
const apps: App[] = [];
afterEach(async () => {
  for (const { app } of apps.splice(0)) await app.close();
});

async function start(platform: Platform, options: Record<string, unknown> = {}, fixture?: Fixture) {
  const app = await createNestApp(
    platform,
    { store: new MemoryStore(), logger: false, ...options },
    fixture ?? { counters: new Counters(), gates: new Gates() },
    [NestOnlyController],
  );
  apps.push(app);
  return app;
}

const json = { 'content-type': 'application/json' };
const keyed = (key: string) => ({ ...json, 'idempotency-key': key });

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('options are checked before any request', () => {
  it('an unknown option name of @Idempotent throws where the decorator is written', () => {
    expect(() => Idempotent({ requried: false } as never)).toThrow(/unknown option "requried"/);
    expect(() => Idempotent(null as never)).toThrow(/options must be an object/);
  });

  it("a handler's options that do not fit the module's fail app.init(), naming the handler", async () => {
    @Controller()
    class ShortRetention {
      @Post('x')
      @Idempotent({ retentionMs: 1_000 })
      x() {}
    }
    const error = await rejection(
      createNestApp('express', { store: new MemoryStore(), logger: false }, {} as Fixture, [ShortRetention]),
    );
    expect(isInvalidOptionsError(error), String(error)).toBe(true);
    expect(String(error)).toMatch(
      /@Idempotent on ShortRetention\.x: retentionMs \(1000\) must be at least leaseMs/,
    );
  });

  it('forRootAsync takes the options from a factory with what it injects', async () => {
    const STORE = Symbol('store');
    const store: Store = new MemoryStore();
    @Module({ providers: [{ provide: STORE, useValue: store }], exports: [STORE] })
    class StoreModule {}
    @Controller()
    class Echo {
      @Post('echo')
      @Idempotent()
      echo() {
        return { at: Math.random() };
      }
    }
    @Module({
      imports: [
        OncelyModule.forRootAsync({
          imports: [StoreModule],
          inject: [STORE],
          useFactory: async (injected: Store) => ({ store: injected, logger: false }),
        }),
      ],
      controllers: [Echo],
    })
    class AsyncModule {}
    const request = await listen(
      await NestFactory.create(AsyncModule, { logger: false, abortOnError: false }),
    );
    const first = await request({ path: '/echo', headers: keyed('async'), body: '{}' });
    const replay = await request({ path: '/echo', headers: keyed('async'), body: '{}' });
    expect(first.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.equals(first.body)).toBe(true);
    // The factory's store, not one of the module's own.
    expect(await store.get(defaultId('POST', '/echo', 'async'))).toMatchObject({ state: 'completed' });
  });

  it('a response that is neither Express nor Fastify is refused, never run unprotected', async () => {
    expect(await exchangeOf({ method: 'POST', headers: {} }, { send() {} })).toBeUndefined();
  });
});

for (const platform of ['express', 'fastify'] as const) {
  describe(`oncely/nestjs on ${platform}`, () => {
    it("a handler's options override its controller's; applied twice, the interceptor runs once", async () => {
      const { request } = await start(platform);
      expect((await request({ path: '/nest/optional', headers: json, body: '{}' })).status).toBe(201);
      expectProblem(await request({ path: '/nest/required', headers: json, body: '{}' }), 'key-missing', 400);
      const first = await request({ path: '/nest/optional', headers: keyed('twice'), body: '{}' });
      expect(first.status).toBe(201);
      expect(first.json()).toEqual({ n: 1, keyed: true });
      const replay = await request({ path: '/nest/optional', headers: keyed('twice'), body: '{}' });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body.equals(first.body)).toBe(true);
    });

    it('a handler that takes @Res() gets the claim; the layer writes its replay, 409 and 400 itself', async () => {
      const fixture = { counters: new Counters(), gates: new Gates() };
      const { request } = await start(platform, {}, fixture);
      const send = (key?: string) =>
        Promise.race([
          request({ path: '/nest/own-response', headers: key ? keyed(key) : json, body: '{}' }),
          new Promise<never>((_, reject) =>
            setTimeout(() => reject(new Error('no answer within 3 s')), 3_000),
          ),
        ]);
      const first = send('own');
      await until(() => fixture.gates.arrived.has('own'));
      expectProblem(await send('own'), 'request-in-progress', 409);
      fixture.gates.open('own');
      const answer = await first;
      expect(answer.status).toBe(201);
      expect(answer.json()).toEqual({ n: 1, token: 'number', signal: true });
      const replay = await send('own');
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body.equals(answer.body)).toBe(true);
      expectProblem(await send(), 'key-missing', 400);
      expect(fixture.counters.get('own-response', 'own')).toBe(1);
    });

    it("guards run first: a replay is refused to a request the route's guard rejects", async () => {
      const { request } = await start(platform);
      const allowed = await request({
        path: '/nest/guarded',
        headers: { ...keyed('g'), 'x-allow': 'yes' },
        body: '{}',
      });
      expect(allowed.status).toBe(201);
      const refused = await request({ path: '/nest/guarded', headers: keyed('g'), body: '{}' });
      expect(refused.status).toBe(403);
      expect(refused.headers['idempotent-replayed']).toBeUndefined();
    });

    it('a response streamed past maxBodyBytes is sent whole, not stored, and its key released when it ends', async () => {
      const fixture = { counters: new Counters(), gates: new Gates() };
      const { request } = await start(platform, { maxBodyBytes: 4096 }, fixture);
      const first = await request({ path: '/nest/big', headers: keyed('big'), body: '{}' });
      expect(first.status).toBe(200);
      expect(first.body.byteLength).toBe(20 * 1024 + 2);
      const again = await request({ path: '/nest/big', headers: keyed('big'), body: '{}' });
      expect(again.status).toBe(200);
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      expect(again.body.subarray(-2).toString()).toBe('-2');
      expect(fixture.counters.get('big', 'big')).toBe(2);
    });

    it('an HttpException is the response: a 404 thrown by the handler is stored and replayed', async () => {
      const fixture = { counters: new Counters(), gates: new Gates() };
      const { request } = await start(platform, {}, fixture);
      const first = await request({ path: '/nest/not-found', headers: keyed('nf'), body: '{}' });
      expect(first.status).toBe(404);
      expect(first.json().message).toBe('no order (run 1)');
      const replay = await request({ path: '/nest/not-found', headers: keyed('nf'), body: '{}' });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body.equals(first.body)).toBe(true);
      expect(fixture.counters.get('not-found', 'nf')).toBe(1);
    });
  });
}

describe('oncely/nestjs on express, a handler that breaks its response', () => {
  it('a header set after a partial write: the connection is closed, nothing stored, the retry runs', async () => {
    const fixture = { counters: new Counters(), gates: new Gates() };
    const { request } = await start('express', {}, fixture);
    await expect(request({ path: '/nest/broken', headers: keyed('broken'), body: '{}' })).rejects.toThrow();
    const retry = await request({ path: '/nest/broken', headers: keyed('broken'), body: '{}' });
    expect(retry.status).toBe(201);
    expect(retry.body.toString()).toBe('part-done-2');
    expect(fixture.counters.get('broken', 'broken')).toBe(2);
  });
});

describe('oncely/nestjs on express without a parser for the body', () => {
  it('reads the body itself, so another body under the same key is a 422', async () => {
    @Controller()
    class Plain {
      @Post('plain')
      @Idempotent()
      plain() {
        return { ok: true };
      }
    }
    @Module({
      imports: [OncelyModule.forRoot({ store: new MemoryStore(), logger: false })],
      controllers: [Plain],
    })
    class PlainModule {}
    const request = await listen(
      await NestFactory.create(PlainModule, { logger: false, abortOnError: false }),
    );
    const headers = { 'content-type': 'text/plain', 'idempotency-key': 'plain' };
    expect((await request({ path: '/plain', headers, body: 'one' })).status).toBe(201);
    expect((await request({ path: '/plain', headers, body: 'one' })).headers['idempotent-replayed']).toBe(
      'true',
    );
    expectProblem(await request({ path: '/plain', headers, body: 'two' }), 'key-reused', 422);
  });
});

/** Listens on loopback (closed after the test) and returns a client for it. */
async function listen(app: App['app']) {
  await app.listen(0, '127.0.0.1');
  apps.push({ app } as App);
  const { port } = app.getHttpServer().address() as AddressInfo;
  return socketClient(`http://127.0.0.1:${port}`);
}
