import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { describe, expect, it } from 'vitest';
import { currentClaim, idempotent } from '../../src/decorators.js';
import { isInvalidOptionsError, MemoryStore } from '../../src/index.js';

// This folder compiles with experimentalDecorators, as a Nest app does: @idempotent works there too, on the
// method's descriptor (test/unit/decorators.test.ts covers it as a standard decorator).
const store = new MemoryStore();

@Injectable()
class PaymentsService {
  runs = 0;

  @idempotent({ scope: 'nest.payments.charge', key: (orderId: string) => orderId, store })
  async charge(orderId: string, cents: number) {
    this.runs++;
    return { orderId, cents, token: currentClaim()?.token };
  }
}

@Module({ providers: [PaymentsService] })
class PaymentsModule {}

describe('@idempotent under legacy decorators (a Nest service)', () => {
  it('runs once per key, with the instance as this and the claim reachable', async () => {
    const app = await NestFactory.createApplicationContext(PaymentsModule, { logger: false });
    const payments = app.get(PaymentsService);
    const first = await payments.charge('o1', 100);
    expect(await payments.charge('o1', 100)).toEqual(first);
    expect(typeof first.token).toBe('number');
    expect(payments.runs).toBe(1);
    await app.close();
  });

  it('refuses anything but a method, as the standard form does', () => {
    const decorate = idempotent({ scope: 's', key: (id: string) => id });
    const error = (() => {
      try {
        decorate({}, 'value', { value: 42 } as never);
      } catch (caught) {
        return caught;
      }
    })();
    expect(isInvalidOptionsError(error)).toBe(true);
  });
});
