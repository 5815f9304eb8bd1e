import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import amqp, { type ChannelModel } from 'amqplib';
import { Redis } from 'ioredis';
import pg from 'pg';
import { NatsPublisher } from '../../src/messaging/brokers/nats.js';
import { RabbitMqPublisher } from '../../src/messaging/brokers/rabbitmq.js';
import { RedisStreamsPublisher } from '../../src/messaging/brokers/redis-streams.js';
import { migrate } from '../../src/messaging/outbox/index.js';
import type { Publisher } from '../../src/messaging/publisher.js';

export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const tag = `${process.pid}_${Math.random().toString(36).slice(2, 6)}`;

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export const spread = (values: readonly number[], digits = 0) => {
  const format = (n: number) => (digits === 0 ? Math.round(n).toLocaleString('en') : n.toFixed(digits));
  return `${format(median(values))} (${format(Math.min(...values))}–${format(Math.max(...values))})`;
};

export function versionOf(pkg: string): string {
  const url = new URL(`../../node_modules/${pkg}/package.json`, import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
}

export function environment(reproduce: string, extra: string): string {
  const commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
  const cpu = cpus();
  return (
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpu[0]?.model ?? 'unknown CPU'} ` +
    `(${cpu.length} cores shared by the benchmark, the database, the brokers and other work, ` +
    `${Math.round(totalmem() / 2 ** 30)} GiB), Node ${process.version}, ${extra}, oncely at ${commit}; load average ` +
    `${loadavg()[0]!.toFixed(1)} when the tables were written (other work ran on the machine too). ` +
    `Reproduce: \`${reproduce}\`.`
  );
}

/** A fresh outbox schema on a small pool of its own. */
export async function outboxDatabase(poolSize: number) {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: poolSize });
  pool.on('error', () => {});
  const schema = `oncely_bench_msg_${tag}`;
  await migrate(pool, { schema });
  return {
    pool,
    schema,
    table: `"${schema}".oncely_outbox`,
    async close() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

/** One broker target with its publisher and a way to empty it between rounds. */
export interface BrokerTarget {
  readonly name: string;
  readonly label: string;
  readonly publisher: Publisher;
  readonly topic: string;
  /** Messages stored at the broker right now. */
  stored(): Promise<number>;
  reset(): Promise<void>;
  close(): Promise<void>;
}

export async function natsTarget(): Promise<BrokerTarget> {
  const nc: NatsConnection = await connect({ servers: '127.0.0.1:4222', noAsyncTraces: true });
  const jsm = await jetstreamManager(nc);
  const name = `ONCELY_BENCH_${tag}`.toUpperCase();
  const subject = `oncely.bench.${tag}`;
  await jsm.streams.add({ name, subjects: [`${subject}.>`], duplicate_window: 120_000_000_000 });
  return {
    name: 'nats',
    label: 'NATS JetStream (file stream, `Nats-Msg-Id` dedup)',
    publisher: new NatsPublisher({ jetstream: jetstream(nc) }),
    topic: `${subject}.events`,
    stored: async () => Number((await jsm.streams.info(name)).state.messages),
    reset: async () => {
      await jsm.streams.purge(name);
    },
    close: async () => {
      await jsm.streams.delete(name).catch(() => false);
      await nc.close();
    },
  };
}

export async function rabbitTarget(): Promise<BrokerTarget> {
  const connection: ChannelModel = await amqp.connect('amqp://guest:guest@127.0.0.1:5672');
  const admin = await connection.createChannel();
  const queue = `oncely_bench_${tag}`;
  await admin.assertQueue(queue, { durable: true });
  return {
    name: 'rabbitmq',
    label: 'RabbitMQ (durable queue, persistent, publisher confirms)',
    publisher: new RabbitMqPublisher({ channel: () => connection.createConfirmChannel() }),
    topic: queue,
    stored: async () => (await admin.checkQueue(queue)).messageCount,
    reset: async () => {
      await admin.purgeQueue(queue);
    },
    close: async () => {
      await admin.deleteQueue(queue).catch(() => {});
      await connection.close();
    },
  };
}

export async function redisTarget(): Promise<BrokerTarget> {
  const client = new Redis({ port: 6379, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
  await new Promise((resolve) => client.once('ready', resolve));
  const stream = `oncely-bench-${tag}`;
  return {
    name: 'redis-streams',
    label: 'Redis Streams (XADD)',
    publisher: new RedisStreamsPublisher({ client, stream: () => stream }),
    topic: stream,
    stored: async () => client.xlen(stream),
    reset: async () => {
      await client.del(stream);
    },
    close: async () => {
      await client.del(stream);
      client.disconnect();
    },
  };
}
