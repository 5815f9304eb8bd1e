// `npm run test:quick`: the contributor's loop, well under a minute on a 2-core machine. The files that need no
// service (no Redis, PostgreSQL, RabbitMQ or NATS, no redis-server or browser of their own): the unit tests, the
// contract suite on the memory store, the client, the HTTP policy and in-process adapter tests on memory, and the
// docs' structure checks. `npm test` stays the full suite that CI runs (the stores, brokers, storms, the docs'
// blocks compiled and run, the package test); run it before you push.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'test/unit/**/*.test.ts',
      'test/contract/**/*.test.ts',
      'test/client/**/*.test.ts',
      'test/types/**/*.test.ts',
      'test/http/{policy,adapters,hono-plain,framing,compression,streaming,diagnostics}.test.ts',
      'test/lambda/{options,types,lease-until}.test.ts',
      'test/messaging/{inbox,run-gate}.test.ts',
      'test/otel/{engine,propagation}.test.ts',
      'test/docs/{markdown,links,checker}.test.ts',
    ],
    // Stops and restarts a redis-server of its own.
    exclude: ['test/client/store-outage.test.ts'],
  },
});
