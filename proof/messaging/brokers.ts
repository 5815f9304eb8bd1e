// The brokers under test, each behind a fault proxy (proof/proxy.ts) that every relay and consumer connection
// goes through, and what "the broker fails" means for each:
// - nats: a nats-server of the run's own (JetStream, file storage in a temporary directory, on a free port), never
//   the machine's shared one: SIGKILLed and restarted on the same port and directory.
// - redis-streams: a redis-server of the run's own with an append-only file fsynced on every write (`appendfsync
//   always`), so a SIGKILL loses nothing it acknowledged: killed and restarted on the same port and directory.
// - rabbitmq: the machine's shared RabbitMQ, which other work uses, so it is never restarted: the proxy resets
//   every connection at once (what clients see when a broker dies), with exchange and queues of the run's own.
// Every broker also gets the proxy's partition: nothing forwarded either way for a while, bytes held and delivered
// late on heal.
// After the run, `readLog` reads back every copy of every message in the broker's order: the NATS stream, the
// Redis stream, and for RabbitMQ an audit queue bound to the same fanout exchange as the work queue, read by
// nobody until then.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import amqp from 'amqplib';
import { Redis } from 'ioredis';
import { freePort, type RedisProcess, startRedis } from '../../test/redis/support/redis-server.js';
import { services } from '../../test/support/services.js';
import { type FaultProxy, startFaultProxy } from '../proxy.js';
import type { BrokerConnection, BrokerEntry, BrokerKind } from './types.js';

export interface BrokerUnderTest {
  readonly kind: BrokerKind;
  /** What relays and consumers connect to (the proxy). */
  readonly connection: BrokerConnection;
  readonly proxy: FaultProxy;
  /** The broker's failure: a restart of its process, or (RabbitMQ) every connection reset. Resolves with what was done. */
  fail(downMs: number): Promise<string>;
  readonly failure: 'broker-restart' | 'connection-reset';
  /** Every copy of every message, in the broker's order. */
  readLog(): Promise<BrokerEntry[]>;
  /** What the broker still holds for the consumers after they stopped, and what went to its dead-letter path. */
  leftovers(): Promise<{ unsettled: number; deadLettered: number }>;
  close(): Promise<void>;
  /** On an interrupt: kill the broker's own processes at once (no cleanup). */
  kill(): void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const uuidOf = (payload: string): string | null => {
  try {
    return (JSON.parse(payload) as { uuid?: string }).uuid ?? null;
  } catch {
    return null;
  }
};

export function startBroker(kind: BrokerKind, runId: string): Promise<BrokerUnderTest> {
  if (kind === 'nats') return startNats(runId);
  if (kind === 'rabbitmq') return startRabbit(runId);
  return startRedisStreams(runId);
}

async function spawnNats(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn('/usr/sbin/nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], {
    stdio: 'ignore',
  });
  for (let attempt = 0; attempt < 400; attempt++) {
    if (child.exitCode !== null) throw new Error(`nats-server on ${port} exited (${child.exitCode})`);
    try {
      const nc = await natsConnect({ servers: `127.0.0.1:${port}`, reconnect: false });
      try {
        await (await jetstreamManager(nc)).getAccountInfo();
        return child;
      } finally {
        await nc.close();
      }
    } catch {
      await sleep(25);
    }
  }
  throw new Error(`nats-server on ${port} never served JetStream`);
}

async function startNats(runId: string): Promise<BrokerUnderTest> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'oncely-proof-nats-'));
  let server = await spawnNats(port, dir);
  const proxy = await startFaultProxy(port);
  const stream = `PROOF_${runId}`.toUpperCase();
  const subject = `proof.${runId}.events`;
  const ackWaitMs = 4_000;
  const admin = await natsConnect({
    servers: `127.0.0.1:${port}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 100,
  });
  const jsm = await jetstreamManager(admin);
  // The window covers the relay's retry horizon (backoff up to 2 s, 10 attempts, a 4 s lease: about 30 s).
  await jsm.streams.add({ name: stream, subjects: [`proof.${runId}.>`], duplicate_window: 120_000 * 1e6 });
  await jsm.consumers.add(stream, {
    durable_name: 'proof',
    ack_policy: AckPolicy.Explicit,
    ack_wait: ackWaitMs * 1e6,
    max_ack_pending: 10_000,
  });
  return {
    kind: 'nats',
    connection: { kind: 'nats', port: proxy.port, stream, durable: 'proof', subject, ackWaitMs },
    proxy,
    failure: 'broker-restart',
    async fail(downMs) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGKILL');
      await exited;
      await sleep(downMs);
      server = await spawnNats(port, dir);
      return `nats-server :${port} SIGKILL, down ${downMs} ms, restarted on its JetStream directory`;
    },
    async readLog() {
      const last = Number((await jsm.streams.info(stream)).state.last_seq);
      const entries: BrokerEntry[] = [];
      if (last === 0) return entries;
      const messages = await (await jetstream(admin).consumers.get(stream)).consume();
      for await (const message of messages) {
        entries.push({
          position: message.seq,
          messageId: message.headers?.get('Nats-Msg-Id') ?? '',
          uuid: uuidOf(message.string()),
        });
        if (message.seq >= last) break;
      }
      await messages.close();
      return entries;
    },
    async leftovers() {
      const info = await jsm.consumers.info(stream, 'proof');
      return { unsettled: info.num_pending + info.num_ack_pending, deadLettered: 0 };
    },
    kill: () => server.kill('SIGKILL'),
    async close() {
      await jsm.streams.delete(stream).catch(() => {});
      await admin.close();
      await proxy.close();
      server.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function startRabbit(runId: string): Promise<BrokerUnderTest> {
  const target = new URL(services.rabbitmq.url);
  const proxy = await startFaultProxy(Number(target.port || 5672));
  const viaProxy = new URL(services.rabbitmq.url);
  viaProxy.port = String(proxy.port);
  const exchange = `proof.${runId}`;
  const queue = `proof.${runId}.work`;
  const dead = `proof.${runId}.dead`;
  const audit = `proof.${runId}.audit`;
  const admin = await amqp.connect(services.rabbitmq.url);
  const channel = await admin.createChannel();
  await channel.assertExchange(exchange, 'fanout', { durable: true });
  await channel.assertQueue(dead, { durable: true });
  await channel.assertQueue(queue, {
    durable: true,
    arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': dead },
  });
  await channel.assertQueue(audit, { durable: true });
  await channel.bindQueue(queue, exchange, '');
  await channel.bindQueue(audit, exchange, '');
  return {
    kind: 'rabbitmq',
    connection: { kind: 'rabbitmq', url: viaProxy.toString(), exchange, queue },
    proxy,
    failure: 'connection-reset',
    async fail() {
      const connections = proxy.connections;
      proxy.reset();
      return `every connection through the proxy reset at once (${connections}): the shared RabbitMQ is not restarted`;
    },
    async readLog() {
      const { messageCount } = await channel.checkQueue(audit);
      const entries: BrokerEntry[] = [];
      if (messageCount === 0) return entries;
      const reader = await admin.createChannel();
      await new Promise<void>((resolve) => {
        void reader.consume(
          audit,
          (message) => {
            if (message === null) return;
            entries.push({
              position: entries.length,
              messageId: String(message.properties.messageId ?? ''),
              uuid: uuidOf(message.content.toString('utf8')),
            });
            if (entries.length === messageCount) resolve();
          },
          { noAck: true },
        );
      });
      await reader.close();
      return entries;
    },
    async leftovers() {
      const [work, parked] = await Promise.all([channel.checkQueue(queue), channel.checkQueue(dead)]);
      return { unsettled: work.messageCount, deadLettered: parked.messageCount };
    },
    kill: () => {},
    async close() {
      for (const name of [queue, dead, audit]) await channel.deleteQueue(name).catch(() => {});
      await channel.deleteExchange(exchange).catch(() => {});
      await admin.close().catch(() => {});
      await proxy.close();
    },
  };
}

const PERSISTENT = ['--appendonly', 'yes', '--appendfsync', 'always'];

async function startRedisStreams(runId: string): Promise<BrokerUnderTest> {
  let node: RedisProcess = await startRedis({ args: PERSISTENT });
  const proxy = await startFaultProxy(node.port);
  const stream = `proof:${runId}:events`;
  const group = 'proof';
  const admin = new Redis({ port: node.port, host: '127.0.0.1', retryStrategy: () => 50, protocol: 2 });
  admin.on('error', () => {});
  await admin.xgroup('CREATE', stream, group, '0', 'MKSTREAM');
  return {
    kind: 'redis-streams',
    connection: { kind: 'redis-streams', port: proxy.port, stream, group, claimIdleMs: 2_000 },
    proxy,
    failure: 'broker-restart',
    async fail(downMs) {
      await node.kill();
      await sleep(downMs);
      node = await startRedis({ port: node.port, dir: node.dir, args: PERSISTENT });
      return `redis-server :${node.port} SIGKILL, down ${downMs} ms, restarted from its AOF (appendfsync always)`;
    },
    async readLog() {
      const entries: BrokerEntry[] = [];
      let from = '-';
      for (;;) {
        const page = (await admin.xrange(stream, from, '+', 'COUNT', 10_000)) as [string, string[]][];
        for (const [id, fields] of page) {
          const field = (name: string) => {
            const at = fields.indexOf(name);
            return at === -1 || at % 2 === 1 ? undefined : fields[at + 1];
          };
          entries.push({
            position: entries.length,
            messageId: field('oncely-id') ?? '',
            uuid: uuidOf(field('payload') ?? ''),
          });
          from = `(${id}`;
        }
        if (page.length < 10_000) return entries;
      }
    },
    async leftovers() {
      const groups = (await admin.call('XINFO', 'GROUPS', stream)) as unknown[][];
      const info = groups[0] ?? [];
      const value = (name: string) => Number(info[info.indexOf(name) + 1] ?? 0);
      const deadLettered = await admin.xlen(`${stream}:dead`);
      return { unsettled: value('pending') + value('lag'), deadLettered };
    },
    kill: () => node.process.kill('SIGKILL'),
    async close() {
      admin.disconnect();
      await proxy.close();
      await node.kill();
      rmSync(node.dir, { recursive: true, force: true });
    },
  };
}
