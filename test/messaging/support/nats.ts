import { AckPolicy, type JetStreamManager, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { services } from '../../support/services.js';

export const natsConnect = (port: number = services.nats.port): Promise<NatsConnection> =>
  connect({ servers: `127.0.0.1:${port}`, maxReconnectAttempts: -1, reconnectTimeWait: 100 });

export const uniqueName = (label: string) =>
  `${label}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`.toUpperCase();

/** A file-backed stream of its own with a durable pull consumer; `drop()` deletes it. */
export async function freshStream(nc: NatsConnection, label: string, duplicateWindowMs = 120_000) {
  const name = uniqueName(label);
  const subject = `oncely.${name.toLowerCase()}`;
  const jsm: JetStreamManager = await jetstreamManager(nc);
  await jsm.streams.add({
    name,
    subjects: [`${subject}.>`],
    duplicate_window: duplicateWindowMs * 1_000_000,
  });
  await jsm.consumers.add(name, {
    durable_name: 'test',
    ack_policy: AckPolicy.Explicit,
    ack_wait: 30_000_000_000,
  });
  return {
    name,
    subject,
    jsm,
    count: async () => Number((await jsm.streams.info(name)).state.messages),
    drop: () => jsm.streams.delete(name).catch(() => false),
  };
}
