import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, MemoryStore } from '../../src/index.js';
import { idempotency, middyIdempotency, sqsIdempotency } from '../../src/lambda/index.js';

// Options are checked once, when the factory is called, never per invocation (as every adapter does).
const store = new MemoryStore();

describe('oncely/lambda options', () => {
  it.each([
    ['the wrapper', (options: object) => idempotency(options as never)],
    ['the Middy middleware', (options: object) => middyIdempotency(options as never)],
  ])(
    '%s refuses longRunning (an invocation is frozen once it answers), unknown and malformed options',
    (_, make) => {
      expect(() => make({ store, longRunning: { location: (id: string) => `/o/${id}` } })).toThrow(
        /longRunning is not available on Lambda/,
      );
      expect(() => make({ store, waitMS: 5 })).toThrow(InvalidOptionsError);
      expect(() => make({ store, methods: ['GET'] })).toThrow(InvalidOptionsError);
      expect(() => make({ store, leaseMs: 60_000, retentionMs: 1_000 })).toThrow(InvalidOptionsError);
      expect(() => make({})).toThrow(InvalidOptionsError);
    },
  );

  it('the wrapper refuses what is not a handler', () => {
    expect(() => idempotency({ store })('nope' as never)).toThrow(InvalidOptionsError);
  });

  it('sqsIdempotency refuses a key or onParked that is not a function, unknown options and a non-handler', () => {
    expect(() => sqsIdempotency({ store, key: 'messageId' as never })).toThrow(InvalidOptionsError);
    expect(() => sqsIdempotency({ store, onParked: true as never })).toThrow(InvalidOptionsError);
    expect(() => sqsIdempotency({ store, messageId: () => 'x' } as never)(async () => {})).toThrow(
      InvalidOptionsError,
    );
    expect(() => sqsIdempotency({ store })(42 as never)).toThrow(InvalidOptionsError);
  });

  it('a wrapped handler refuses an event that is no API Gateway or Function URL event', async () => {
    const handler = idempotency({ store, logger: false })(async () => ({ statusCode: 200, body: '' }));
    await expect(
      handler({ Records: [] } as never, { getRemainingTimeInMillis: () => 1_000 }),
    ).rejects.toThrow(/neither an API Gateway REST/);
  });
});
