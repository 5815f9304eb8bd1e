/**
 * @module `consumeIdempotently` for Redis Streams: a consumer group's entries through an `Inbox`, with XREADGROUP
 * for new entries, XAUTOCLAIM for those a crashed consumer left pending (and for retries), XACK once the outcome is
 * stored, and a dead-letter stream for parked entries.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { InvalidOptionsError } from '../../../core/errors.js';
import { wholeNumber } from '../../../core/validate.js';
import type { InboxHandler } from '../../consumer.js';
import { pause } from '../../pause.js';
import type { ConsumerErrorHandler } from '../consumer-errors.js';
import {
  type BrokerSettle,
  consumerOptions,
  consumerParts,
  type InboxConsumer,
  type SharedConsumeOptions,
  settleAs,
  showOutcome,
} from '../settle.js';
import type { StreamEntry } from './fields.js';
import { whenReady } from './ready.js';
import { autoClaimEntries, readGroupEntries } from './replies.js';

// How long the consumer waits for a client that is not ready before it reports it (and waits again, in the loop).
const READY_TIMEOUT_MS = 10_000;

export interface RedisStreamsConsumeOptions extends SharedConsumeOptions<StreamEntry> {
  /**
   * A client of the caller's used only by this consumer: its XREADGROUP blocks the connection for `blockMs`.
   * RESP2 or RESP3 (either `replyMapping`); connected or not: the consumer waits until it is ready.
   */
  readonly client: Redis;
  readonly stream: string;
  readonly group: string;
  /** This consumer's name in the group. Default: a random one per process start. */
  readonly consumer?: string;
  /** Default: the entry's `oncely-id` (the outbox id), else `<stream>:<entryId>`. */
  readonly messageId?: (entry: StreamEntry) => string;
  /** Entries read (and handled concurrently) at once. Default 32. */
  readonly count?: number;
  /** How long one XREADGROUP waits for new entries; also the longest `stop()` waits for it. Default 2,000 ms. */
  readonly blockMs?: number;
  /**
   * Entries pending (delivered, not acknowledged) longer than this are claimed with XAUTOCLAIM: those of a
   * consumer that crashed, and this consumer's own retries. Default 30,000 ms.
   */
  readonly claimIdleMs?: number;
  /** Where the group starts when this call creates it (`0`: the whole stream, `$`: new entries). Default `0`. */
  readonly startId?: string;
  /** Stream that receives parked and id-less entries before they are acknowledged; `false` drops them. Default `<stream>:dead`. */
  readonly deadLetterStream?: string | false;
  /**
   * Receives every error the loop recovers from (Redis unreachable, a failover, a reply it cannot read), with the
   * step that failed: `connect`, `createGroup`, `claim`, `read`, `ack` or `onOutcome` (the hook threw). A group
   * that disappeared (`NOGROUP`: the stream was deleted, Redis restarted without persistence) is created again. Entries stay pending and the loop tries again. Without
   * it, the first failure of a run of failures is a process warning.
   */
  readonly onError?: ConsumerErrorHandler;
}

/** `stop()` stops reading (within `blockMs`) and resolves once the entries in hand are settled. */
export interface RedisStreamsInboxConsumer<R> extends InboxConsumer<StreamEntry, R> {
  readonly consumer: string;
}

/**
 * Consumes a stream in a consumer group through an `Inbox`: XREADGROUP for new entries, XAUTOCLAIM for entries
 * stuck with a crashed consumer (and retries), XACK once the outcome is stored; entries that were parked or have
 * no usable id are copied to the dead-letter stream and acknowledged in one MULTI. A `busy` or `failed` entry is
 * left pending and comes back through XAUTOCLAIM after `claimIdleMs`.
 *
 * @example
 * // A connection of its own (XREADGROUP blocks it), with an error listener like every ioredis client.
 * const reader = redis.duplicate();
 * reader.on('error', (error) => console.error('redis:', error.message));
 * const consumer = await consumeIdempotently(async (entry) => apply(JSON.parse(entry.payload.toString())), {
 *   client: reader, stream: 'payment.created', group: 'ledger', store: new RedisStore({ client: redis }),
 * });
 */
export async function consumeIdempotently<R>(
  handler: InboxHandler<StreamEntry, R>,
  options: RedisStreamsConsumeOptions,
): Promise<RedisStreamsInboxConsumer<R>> {
  const {
    client,
    stream,
    group,
    consumer = `consumer-${randomUUID()}`,
    count: countOption,
    blockMs: blockOption,
    claimIdleMs: claimOption,
    startId = '0',
    deadLetterStream = `${stream}:dead`,
    ...shared
  } = consumerOptions(options);
  if (client === null || typeof client?.xreadgroup !== 'function')
    throw new InvalidOptionsError('client must be an ioredis client');
  for (const [name, value] of Object.entries({ stream, group, consumer, startId })) {
    if (typeof value !== 'string' || value === '')
      throw new InvalidOptionsError(`${name} must be a non-empty string`);
  }
  if (deadLetterStream !== false && (typeof deadLetterStream !== 'string' || deadLetterStream === '')) {
    throw new InvalidOptionsError('deadLetterStream must be a stream name or false');
  }
  const count = wholeNumber('count', countOption, 32, { min: 1, max: 10_000 });
  const blockMs = wholeNumber('blockMs', blockOption, 2_000, { min: 1 });
  const claimIdleMs = wholeNumber('claimIdleMs', claimOption, 30_000, { min: 1 });
  const { inbox, onOutcome, errors } = consumerParts(
    handler,
    shared,
    (entry: StreamEntry) => entry.id,
    `oncely/redis-streams consumer ${consumer} of ${stream}`,
  );
  const source = { system: 'redis', destination: stream, group } as const;
  const stop = new AbortController();

  const createGroup = async () => {
    try {
      await client.xgroup('CREATE', stream, group, startId, 'MKSTREAM');
    } catch (error) {
      if (!String((error as Error).message).startsWith('BUSYGROUP')) throw error;
    }
  };
  // A client still connecting (or made with lazyConnect) would fail this at once without its offline queue.
  await whenReady(client, stop.signal, READY_TIMEOUT_MS);
  await createGroup();

  let operation = 'connect';
  const settle = async (
    entries: readonly StreamEntry[],
    deleted: readonly string[],
    redelivered: boolean,
  ) => {
    const outcomes = await Promise.all(
      entries.map((entry) => inbox.handle(entry, { redelivered, headers: entry.headers, source })),
    );
    // Entries deleted from the stream while pending: nothing to run, and left alone they stay pending forever.
    const acks: string[] = [...deleted];
    const transaction = client.multi();
    // One MULTI for the batch: each entry's settlement is queued in it, and sent below.
    const broker: BrokerSettle<StreamEntry> = {
      ack: (entry) => acks.push(entry.entryId),
      // Left pending: it comes back through XAUTOCLAIM after `claimIdleMs`.
      retry: () => {},
      deadLetter: (entry, outcome) => {
        if (deadLetterStream !== false) {
          const fields = [...entry.fields].flat();
          transaction.xadd(
            deadLetterStream,
            '*',
            ...fields,
            'oncely-source-entry',
            entry.entryId,
            'oncely-outcome',
            outcome.kind,
          );
        }
        acks.push(entry.entryId);
      },
    };
    entries.forEach((entry, index) => {
      settleAs(broker, entry, outcomes[index]!, claimIdleMs);
    });
    operation = 'ack';
    if (acks.length > 0) {
      transaction.xack(stream, group, ...acks);
      // EXEC answers each command's own error in its slot instead of rejecting.
      for (const [error] of (await transaction.exec()) ?? []) if (error) throw error;
    } else {
      transaction.discard();
    }
    // After the MULTI; one entry's throwing hook does not keep the others' outcomes from being seen.
    entries.forEach((entry, index) => {
      showOutcome(onOutcome, outcomes[index]!, entry, errors);
    });
  };

  let nextClaimAt = 0;
  const claimStuck = async () => {
    let cursor = '0-0';
    do {
      operation = 'claim';
      const reply = await client.callBuffer(
        'XAUTOCLAIM',
        stream,
        group,
        consumer,
        claimIdleMs,
        cursor,
        'COUNT',
        count,
      );
      const claimed = autoClaimEntries(stream, reply);
      cursor = claimed.cursor;
      if (claimed.entries.length + claimed.deleted.length > 0)
        await settle(claimed.entries, claimed.deleted, true);
    } while (cursor !== '0-0' && !stop.signal.aborted);
  };
  const readNew = async () => {
    operation = 'read';
    const reply = await client.callBuffer(
      'XREADGROUP',
      'GROUP',
      group,
      consumer,
      'COUNT',
      count,
      'BLOCK',
      blockMs,
      'STREAMS',
      stream,
      '>',
    );
    const read = readGroupEntries(stream, reply);
    if (read.entries.length + read.deleted.length > 0) await settle(read.entries, read.deleted, false);
  };

  let groupGone = false;
  const loop = (async () => {
    while (!stop.signal.aborted) {
      try {
        operation = 'connect';
        await whenReady(client, stop.signal, READY_TIMEOUT_MS);
        if (stop.signal.aborted) break;
        if (groupGone) {
          operation = 'createGroup';
          await createGroup();
          groupGone = false;
        }
        if (Date.now() >= nextClaimAt) {
          nextClaimAt = Date.now() + Math.max(1, Math.floor(claimIdleMs / 2));
          await claimStuck();
        }
        await readNew();
        errors.recovered();
      } catch (error) {
        if (stop.signal.aborted) break;
        // Redis unreachable, a failover, a reply it cannot read: entries not acknowledged stay pending and come
        // back through XAUTOCLAIM. Report it, wait a little, go on.
        errors.failed(error, operation);
        // The stream or its group was deleted (or Redis restarted without persistence): create it again, as at
        // the start, rather than failing every read from now on.
        if (String((error as Error)?.message).startsWith('NOGROUP')) groupGone = true;
        await pause(Math.min(blockMs, 1_000), stop.signal);
      }
    }
  })();

  return {
    inbox,
    consumer,
    async stop() {
      stop.abort();
      await loop;
    },
  };
}
