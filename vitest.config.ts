import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

// Examples import the package by its public name, as users do; in tests those names point at the sources, so
// tests never run against a stale build and share one copy of every class.
const publicEntries: Record<string, string> = {
  oncely: 'index.ts',
  'oncely/store': 'store.ts',
  'oncely/redis': 'stores/redis/index.ts',
  'oncely/postgres': 'stores/postgres/index.ts',
  'oncely/mysql': 'stores/mysql/index.ts',
  'oncely/dynamodb': 'stores/dynamodb/index.ts',
  'oncely/express': 'http/express.ts',
  'oncely/fastify': 'http/fastify.ts',
  'oncely/hono': 'http/hono.ts',
  'oncely/fetch': 'http/fetch.ts',
  'oncely/node': 'http/node.ts',
  'oncely/client': 'client/index.ts',
  'oncely/outbox': 'messaging/outbox/index.ts',
  'oncely/rabbitmq': 'messaging/brokers/rabbitmq.ts',
  'oncely/nats': 'messaging/brokers/nats.ts',
  'oncely/redis-streams': 'messaging/brokers/redis-streams.ts',
  'oncely/bullmq': 'messaging/brokers/bullmq.ts',
  'oncely/otel': 'otel/index.ts',
  'oncely/testing': 'testing/index.ts',
  'oncely/nestjs': 'nestjs/index.ts',
  'oncely/decorators': 'decorators.ts',
  'oncely/dashboard': 'dashboard/index.ts',
  'oncely/lambda': 'lambda/index.ts',
  'oncely/graphql': 'graphql/index.ts',
  'oncely/trpc': 'trpc/index.ts',
  'oncely/prisma': 'orm/prisma/index.ts',
  'oncely/drizzle': 'orm/drizzle/index.ts',
  'oncely/kysely': 'orm/kysely/index.ts',
  'oncely/typeorm': 'orm/typeorm/index.ts',
  'oncely/knex': 'orm/knex/index.ts',
  'oncely/mikro-orm': 'orm/mikro-orm/index.ts',
  'oncely/postgres-js': 'orm/postgres-js/index.ts',
};

export default defineConfig({
  resolve: {
    alias: Object.entries(publicEntries).map(([name, path]) => ({
      find: new RegExp(`^${name.replace('/', '\\/')}$`),
      replacement: src(path),
    })),
  },
  test: {
    include: ['test/**/*.test.ts'],
    // The Prisma test client is generated code (git ignores it): made once per run, before any file imports it. The
    // package's tarball is packed once per run, in the background, for the files that install or unpack it.
    globalSetup: ['./test/orm/prisma/generate-client.ts', './test/package/support/pack-once.ts'],
    // Storms spawn child processes and real servers; files run in parallel forks, tests in a file serially. Two
    // forks on this 2-core machine (Vitest's default is one fewer than the cores: one): most files wait on services
    // and child processes, so the second fork nearly halves the suite's wall time.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
