/**
 * Every public entry point of the package and the peer packages its docs page tells a user to install for it
 * (docs/adapters/*.md, docs/stores/*.md, docs/messaging/*.md). The package test installs each group alone, so a
 * subpath that needs anything more than this list — an undeclared dependency such as `fastify-plugin` once was —
 * fails to import there. The test also checks this table against package.json `exports` and `peerDependencies`,
 * so a new subpath or peer cannot be left out of it.
 */
export const SUBPATH_PEERS: Readonly<Record<string, readonly string[]>> = {
  oncely: [],
  'oncely/node': [],
  'oncely/store': [],
  'oncely/redis': ['ioredis'],
  'oncely/redis-streams': ['ioredis'],
  'oncely/bullmq': ['bullmq'],
  'oncely/postgres': ['pg'],
  // Recognises a mysql2/promise or a mariadb pool by its shape; its declarations name both drivers' types, which
  // the page says a skipLibCheck: false project installs.
  'oncely/mysql': ['mysql2', 'mariadb'],
  'oncely/dynamodb': ['@aws-sdk/client-dynamodb'],
  'oncely/outbox': ['pg'],
  'oncely/express': ['express'],
  'oncely/fastify': ['fastify'],
  'oncely/hono': ['hono'],
  // Web-standard Request and Response only.
  'oncely/fetch': [],
  // The yoga and Apollo plugins' shapes, no import of graphql-yoga or @apollo/server at run time: only graphql
  // itself; its declarations name @apollo/server's plugin types.
  'oncely/graphql': ['graphql'],
  'oncely/trpc': ['@trpc/server'],
  'oncely/rabbitmq': ['amqplib'],
  'oncely/nats': ['@nats-io/jetstream', '@nats-io/nats-core'],
  'oncely/testing': ['fast-check'],
  'oncely/nestjs': ['@nestjs/common', '@nestjs/core', 'reflect-metadata', 'rxjs'],
  'oncely/decorators': [],
  // Reads through the ioredis client or pg pool the application passes: no peer of its own.
  'oncely/dashboard': [],
  'oncely/client': [],
  // Imports no peer: `@middy/core` is optional even for the Middy middleware, which is a plain object.
  'oncely/lambda': [],
  'oncely/otel': ['@opentelemetry/api'],
  // The ORMs' subpaths import nothing of their ORM at run time; their docs name the ORM and its PostgreSQL driver.
  'oncely/prisma': ['@prisma/client', '@prisma/adapter-pg', 'pg'],
  'oncely/drizzle': ['drizzle-orm', 'pg'],
  'oncely/kysely': ['kysely', 'pg'],
  'oncely/typeorm': ['typeorm', 'pg'],
  'oncely/knex': ['knex', 'pg'],
  'oncely/mikro-orm': ['@mikro-orm/core', '@mikro-orm/knex', '@mikro-orm/postgresql'],
  'oncely/postgres-js': ['postgres'],
};

/**
 * The other Redis clients docs/stores/redis.md names beside ioredis (`oncely/redis`'s peer in the table above): the
 * store recognises each by its shape and imports none, so each is installed in an app of its own without ioredis,
 * where the store runs as the page shows (fixtures/redis-client.mjs).
 */
export const OTHER_REDIS_CLIENTS = ['redis', 'iovalkey', '@valkey/valkey-glide'] as const;

/**
 * What the full fixture app installs besides the peers: the packages the docs' examples use around oncely
 * (`@hono/node-server` to serve Hono on Node, `@nats-io/transport-node` to connect to NATS) and the type packages a
 * TypeScript user adds for the peers that ship none.
 */
export const DOC_EXTRAS = ['@hono/node-server', '@nats-io/transport-node', '@apollo/server'] as const;
export const TYPE_PACKAGES = ['@types/node', '@types/express', '@types/pg', '@types/amqplib'] as const;

/** Subpaths grouped by identical peer lists: one install per group. */
export function peerGroups(): { peers: readonly string[]; subpaths: string[] }[] {
  const groups = new Map<string, { peers: readonly string[]; subpaths: string[] }>();
  for (const [subpath, peers] of Object.entries(SUBPATH_PEERS)) {
    const id = [...peers].sort().join(' ');
    const group = groups.get(id) ?? { peers, subpaths: [] };
    group.subpaths.push(subpath);
    groups.set(id, group);
  }
  return [...groups.values()];
}
