import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { InvalidOptionsError } from '../../../core/errors.js';
import { optionalFunction, wholeNumber } from '../../../core/validate.js';
import { actionFor, Inbox, type InboxHandler, type InboxOptions, type InboxOutcome } from '../../consumer.js';
import { parseEntry, type StreamEntry } from './fields.js';

export interface RedisStreamsConsumeOptions extends Omit<InboxOptions<StreamEntry>, 'messageId'> {
  /** A client of the caller's used only by this consumer: its XREADGROUP blocks the connection for `blockMs`. */
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
  /** Sees every outcome (for metrics and logs). */
  readonly onOutcome?: (outcome: InboxOutcome<unknown>, entry: StreamEntry) => void;
}

export interface RedisStreamsInboxConsumer<R> {
  readonly inbox: Inbox<StreamEntry, R>;
  readonly consumer: string;
  /** Stops reading (within `blockMs`) and resolves once the entries in hand are settled. */
  stop(): Promise<void>;
}

/**
 * Consumes a stream in a consumer group through an `Inbox`: XREADGROUP for new entries, XAUTOCLAIM for entries
 * stuck with a crashed consumer (and retries), XACK once the outcome is stored; entries that were parked or have
 * no usable id are copied to the dead-letter stream and acknowledged in one MULTI. A `busy` or `failed` entry is
 * left pending and comes back through XAUTOCLAIM after `claimIdleMs`.
 *
 * @example
 * const consumer = await consumeIdempotently(async (entry) => apply(JSON.parse(entry.payload.toString())), {
 *   client: redis.duplicate(), stream: 'payment.created', group: 'ledger', store: new RedisStore({ client: redis }),
 * });
 */
export async function consumeIdempotently<R>(
  handler: InboxHandler<StreamEntry, R>,
  options: RedisStreamsConsumeOptions,
): Promise<RedisStreamsInboxConsumer<R>> {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionsError('consumeIdempotently: options are required');
  const {
    client,
    stream,
    group,
    consumer = `consumer-${randomUUID()}`,
    messageId = (entry: StreamEntry) => entry.id,
    count: countOption,
    blockMs: blockOption,
    claimIdleMs: claimOption,
    startId = '0',
    deadLetterStream = `${stream}:dead`,
    onOutcome,
    ...inboxOptions
  } = options;
  if (client === null || typeof client?.xreadgroup !== 'function')
    throw new InvalidOptionsError('client must be an ioredis client');
  for (const [name, value] of Object.entries({ stream, group, consumer, startId })) {
    if (typeof value !== 'string' || value === '')
      throw new InvalidOptionsError(`${name} must be a non-empty string`);
  }
  if (deadLetterStream !== false && (typeof deadLetterStream !== 'string' || deadLetterStream === '')) {
    throw new InvalidOptionsError('deadLetterStream must be a stream name or false');
  }
  optionalFunction('onOutcome', onOutcome);
  const count = wholeNumber('count', countOption, 32, { min: 1, max: 10_000 });
  const blockMs = wholeNumber('blockMs', blockOption, 2_000, { min: 1 });
  const claimIdleMs = wholeNumber('claimIdleMs', claimOption, 30_000, { min: 1 });
  const inbox = new Inbox(handler, { ...inboxOptions, messageId });

  try {
    await client.xgroup('CREATE', stream, group, startId, 'MKSTREAM');
  } catch (error) {
    if (!String((error as Error).message).startsWith('BUSYGROUP')) throw error;
  }

  const settle = async (entries: readonly StreamEntry[], redelivered: boolean) => {
    const outcomes = await Promise.all(entries.map((entry) => inbox.handle(entry, { redelivered })));
    const acks: string[] = [];
    const transaction = client.multi();
    entries.forEach((entry, index) => {
      const outcome = outcomes[index]!;
      const action = actionFor(outcome);
      if (action === 'retry') return;
      if (action === 'deadLetter' && deadLetterStream !== false) {
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
    });
    if (acks.length > 0) {
      transaction.xack(stream, group, ...acks);
      await transaction.exec();
    } else {
      transaction.discard();
    }
    if (onOutcome !== undefined) {
      entries.forEach((entry, index) => {
        onOutcome(outcomes[index]!, entry);
      });
    }
  };

  let stopping = false;
  let nextClaimAt = 0;
  const claimStuck = async () => {
    let cursor = '0-0';
    do {
      const reply = (await client.callBuffer(
        'XAUTOCLAIM',
        stream,
        group,
        consumer,
        claimIdleMs,
        cursor,
        'COUNT',
        count,
      )) as [Buffer, unknown[]];
      cursor = String(reply[0]);
      const entries = reply[1].flatMap((raw) => parseEntry(stream, raw) ?? []);
      if (entries.length > 0) await settle(entries, true);
    } while (cursor !== '0-0' && !stopping);
  };
  const readNew = async () => {
    const reply = (await client.callBuffer(
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
    )) as [Buffer, unknown[]][] | null;
    const entries = (reply?.[0]?.[1] ?? []).flatMap((raw) => parseEntry(stream, raw) ?? []);
    if (entries.length > 0) await settle(entries, false);
  };

  const loop = (async () => {
    while (!stopping) {
      try {
        if (Date.now() >= nextClaimAt) {
          nextClaimAt = Date.now() + Math.max(1, Math.floor(claimIdleMs / 2));
          await claimStuck();
        }
        await readNew();
      } catch {
        // Redis unreachable or a failover: entries stay pending and are claimed again; try again shortly.
        if (!stopping) await new Promise((resolve) => setTimeout(resolve, Math.min(blockMs, 1_000)));
      }
    }
  })();

  return {
    inbox,
    consumer,
    async stop() {
      stopping = true;
      await loop;
    },
  };
}
