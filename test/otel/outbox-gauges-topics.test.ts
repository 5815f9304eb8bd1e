// observeOutbox with `topics`: two applications sharing one outbox table each report their own backlog, in series
// of their own (oncely.outbox.topics), never the other's rows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/messaging/outbox/index.js';
import { ATTR, METRIC, otel } from '../../src/otel/index.js';
import { freshOutbox, testPool } from '../messaging/support/pg.js';
import { requireService } from '../support/services.js';
import { points, sdk } from './support/sdk.js';

const pool = testPool(2);
let box: Awaited<ReturnType<typeof freshOutbox>>;

beforeAll(async () => {
  await requireService('postgres');
  box = await freshOutbox(pool, 'gauges');
});

afterAll(async () => {
  await box?.drop();
  await pool.end();
});

describe('observeOutbox({ topics })', () => {
  it('counts only its topics, in a series named by them', async () => {
    const outbox = new Outbox({ schema: box.schema });
    await outbox.addMany(pool, [
      { topic: 'billing.charged', payload: { n: 1 } },
      { topic: 'billing.refunded', payload: { n: 2 } },
      { topic: 'shipping.sent', payload: { n: 3 } },
    ]);
    const telemetry = sdk();
    const instrumentation = otel({ meterProvider: telemetry.meterProvider });
    const billing = instrumentation.observeOutbox(pool, {
      schema: box.schema,
      topics: ['billing.refunded', 'billing.charged'],
    });
    const shipping = instrumentation.observeOutbox(pool, { schema: box.schema, topics: ['shipping.sent'] });
    try {
      const pending = (await telemetry.metrics()).get(METRIC.outboxPending.name);
      const table = `${box.schema}.oncely_outbox`;
      const series = (topics: string) =>
        points(pending, { [ATTR.outboxTable]: table, [ATTR.outboxTopics]: topics }).map((p) => p.value);
      expect(series('billing.charged,billing.refunded')).toEqual([2]);
      expect(series('shipping.sent')).toEqual([1]);
    } finally {
      billing.stop();
      shipping.stop();
      await telemetry.shutdown();
    }
  });

  it('refuses an empty list at the call', () => {
    expect(() => otel().observeOutbox(pool, { topics: [] })).toThrow(/topics/);
  });
});
