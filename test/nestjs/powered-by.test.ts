import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { Controller, Module, Post, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { afterEach, describe } from 'vitest';
import { Idempotent, OncelyModule } from '../../src/nestjs/index.js';
import { poweredByCases, recordingStore, sender } from '../http/support/powered-by.js';

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
  const { store, stored } = recordingStore();
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
  return { send: sender(port), stored };
}

describe('oncely/nestjs (Express platform) and X-Powered-By', () => poweredByCases(serve));
