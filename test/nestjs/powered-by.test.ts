import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { Controller, Module, Post, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/index.js';
import { Idempotent, OncelyModule } from '../../src/nestjs/index.js';
import type { HeaderPairs } from '../../src/store.js';

// The rule of test/http/powered-by.test.ts on Nest's Express platform: X-Powered-By is the framework's banner,
// never stored, so Nest and oncely/express store and replay the same headers.
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

interface Reply {
  setHeader(name: string, value: string): void;
}

async function serve(banner: boolean) {
  const store = new MemoryStore();
  const stored: HeaderPairs[] = [];
  const complete = store.complete.bind(store);
  store.complete = (input) => {
    stored.push(input.outcome.headers);
    return complete(input);
  };
  @Controller()
  class PayController {
    @Post('pay')
    @Idempotent()
    pay(@Res({ passthrough: true }) reply: Reply) {
      // A banner the app sets itself, late: still not the handler's response.
      if (!banner) reply.setHeader('X-Powered-By', 'Handler/1');
      return { ok: true };
    }
  }
  @Module({
    imports: [OncelyModule.forRoot({ store, logger: false, scope: 'global' })],
    controllers: [PayController],
  })
  class AppModule {}
  const app = await NestFactory.create<NestExpressApplication>(AppModule, {
    logger: false,
    abortOnError: false,
  });
  if (!banner) app.disable('x-powered-by');
  await app.listen(0, '127.0.0.1');
  closers.push(() => app.close());
  const { port } = app.getHttpServer().address() as AddressInfo;
  const send = () =>
    fetch(`http://127.0.0.1:${port}/pay`, { method: 'POST', headers: { 'idempotency-key': 'k' } });
  return { send, stored };
}

describe('oncely/nestjs (Express platform) and X-Powered-By', () => {
  it("is not stored; a replay gets Express's own banner", async () => {
    const { send, stored } = await serve(true);
    const first = await send();
    const replay = await send();
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('x-powered-by')).toBe('Express');
    expect(replay.headers.get('x-powered-by')).toBe('Express');
    expect(stored).toHaveLength(1);
    expect(stored[0]!.map(([name]) => name)).not.toContain('x-powered-by');
  });

  it('set late by the app with the banner disabled: the first answer has it, the record and the replay do not', async () => {
    const { send, stored } = await serve(false);
    const first = await send();
    const replay = await send();
    expect(first.headers.get('x-powered-by')).toBe('Handler/1');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('x-powered-by')).toBeNull();
    expect(stored[0]!.map(([name]) => name)).not.toContain('x-powered-by');
  });
});
