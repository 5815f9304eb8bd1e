/**
 * @module `oncely/bullmq`: the outbox relay's publisher into BullMQ queues: one job per committed event, its job id
 * made from the event's outbox id, so a relay that publishes an event again (it crashed after BullMQ took the job,
 * before the row was marked) adds no second job. With the `Inbox` (re-exported here) a worker applies each event
 * once even when BullMQ runs a job twice (a stalled job). Needs `bullmq` (types only: the caller passes its queues).
 */
import type { JobsOptions, Queue } from 'bullmq';
import { InvalidOptionsError } from '../../core/errors.js';
import { knownOptions, optionalFunction } from '../../core/validate.js';
import type { OutboxMessage, Publisher, PublisherContext } from '../publisher.js';

export * from './shared-exports.js';

/** What the publisher needs of a BullMQ `Queue`: its name, `add`, and its default job options (read to warn). */
export type BullMqQueue = Pick<Queue, 'name' | 'add' | 'defaultJobOptions'>;

/** The job data the publisher writes unless told otherwise (`data` option). */
export interface OutboxJobData {
  /** The event's outbox id: the key a worker's `Inbox` deduplicates on. */
  readonly id: string;
  readonly topic: string;
  readonly key: string | null;
  /** The payload: parsed JSON for `application/json`, else the bytes as base64 (`payloadEncoding: 'base64'`). */
  readonly payload: unknown;
  readonly payloadEncoding: 'json' | 'base64';
  readonly contentType: string;
  readonly headers: Readonly<Record<string, string>>;
  /** When the event was written, ISO 8601. */
  readonly createdAt: string;
}

export interface BullMqPublisherOptions {
  /** The queue each event goes to: one `Queue`, or one per event (by topic, say). The caller owns the queues. */
  readonly queue: BullMqQueue | ((message: OutboxMessage) => BullMqQueue);
  /** The job name. Default: the event's topic. */
  readonly name?: (message: OutboxMessage) => string;
  /** The job data. Default: `OutboxJobData` (id, topic, key, payload, headers, …). */
  readonly data?: (message: OutboxMessage) => unknown;
  /** Job options for every job (attempts, backoff, priority, …). `jobId` is the publisher's: refused here. */
  readonly jobOptions?: Omit<JobsOptions, 'jobId'>;
}

/**
 * The job id of an outbox event: `outbox-` and the event id, with `%` and `:` escaped (BullMQ refuses a custom id
 * that is an integer, as outbox ids are without an `idPrefix`, or that holds a `:`). One event id, one job id, and
 * two event ids never share one.
 */
export function jobIdOf(messageId: string): string {
  return `outbox-${messageId.replaceAll('%', '%25').replaceAll(':', '%3A')}`;
}

/**
 * Adds one BullMQ job per outbox event, with the job id `jobIdOf(event id)`. BullMQ adds nothing for a job id it
 * still holds (waiting, active, delayed, completed or failed), so a republished event makes no second job as long
 * as its first job is kept: keep completed and failed jobs at least the relay's retry horizon (`prepare` warns
 * when the queue's default options remove them sooner). `publish` resolves once Redis accepted the job.
 *
 * @example
 * import { Queue } from 'bullmq';
 * const publisher = new BullMqPublisher({ queue: new Queue('payments', { connection }) });
 */
export class BullMqPublisher implements Publisher {
  readonly name = 'bullmq';
  readonly delivery = 'at-least-once' as const;
  readonly #queue: (message: OutboxMessage) => BullMqQueue;
  readonly #fixedQueue: BullMqQueue | undefined;
  readonly #jobName: (message: OutboxMessage) => string;
  readonly #data: (message: OutboxMessage) => unknown;
  readonly #jobOptions: Omit<JobsOptions, 'jobId'>;

  constructor(options: BullMqPublisherOptions) {
    if (options === null || typeof options !== 'object')
      throw new InvalidOptionsError('BullMqPublisher: options are required ({ queue })');
    knownOptions('BullMqPublisher', options, ['queue', 'name', 'data', 'jobOptions']);
    const { queue } = options;
    if (typeof queue === 'function') {
      this.#queue = queue;
    } else if (isQueue(queue)) {
      this.#fixedQueue = queue;
      this.#queue = () => queue;
    } else {
      throw new InvalidOptionsError('queue must be a BullMQ Queue, or a function (message) => Queue');
    }
    optionalFunction('name', options.name);
    optionalFunction('data', options.data);
    const jobOptions = options.jobOptions ?? {};
    if (jobOptions === null || typeof jobOptions !== 'object')
      throw new InvalidOptionsError('jobOptions must be an object of BullMQ job options');
    if ('jobId' in jobOptions)
      throw new InvalidOptionsError(
        'jobOptions.jobId is the publisher’s: each job’s id is made from its event’s outbox id',
      );
    this.#jobName = options.name ?? ((message) => message.topic);
    this.#data = options.data ?? jobData;
    this.#jobOptions = jobOptions;
  }

  async prepare(context: PublisherContext): Promise<void> {
    const queues = this.#fixedQueue === undefined ? [] : [this.#fixedQueue];
    for (const queue of queues) {
      for (const kind of ['removeOnComplete', 'removeOnFail'] as const) {
        const keep = this.#jobOptions[kind] ?? queue.defaultJobOptions?.[kind];
        const problem = keptTooShort(keep, context.retryHorizonMs);
        if (problem !== undefined)
          context.warn(
            `BullMQ queue ${queue.name}: ${kind} ${problem}: an event the relay publishes again after that (it ` +
              'crashed after BullMQ took the job, before the outbox row was marked) becomes a second job. Keep ' +
              `jobs at least the relay's retry horizon: ${kind}: { age: ${Math.ceil(context.retryHorizonMs / 1000)} }.`,
          );
      }
    }
  }

  async publish(message: OutboxMessage): Promise<void> {
    const queue = this.#queue(message);
    if (!isQueue(queue))
      throw new InvalidOptionsError(`queue(message) must return a BullMQ Queue (topic ${message.topic})`);
    await queue.add(this.#jobName(message), this.#data(message), {
      ...this.#jobOptions,
      jobId: jobIdOf(message.id),
    });
  }
}

function isQueue(value: unknown): value is BullMqQueue {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as BullMqQueue).add === 'function' &&
    typeof (value as BullMqQueue).name === 'string'
  );
}

/** Why a `removeOnComplete`/`removeOnFail` setting can drop a job inside the retry horizon; undefined if it cannot. */
function keptTooShort(keep: JobsOptions['removeOnComplete'], horizonMs: number): string | undefined {
  if (keep === undefined || keep === false) return undefined;
  if (keep === true) return 'is true (a job is removed as soon as it ends)';
  if (typeof keep === 'number') return `keeps the last ${keep} jobs, not a time`;
  const age = 'age' in keep ? keep.age : undefined;
  if (age === undefined) return 'keeps a count of jobs, not a time';
  if (age * 1000 < horizonMs) return `keeps jobs ${age} s`;
  return undefined;
}

/** The default job data: the event as a worker needs it, JSON payloads parsed, bytes as base64. */
export function jobData(message: OutboxMessage): OutboxJobData {
  const { payload } = message;
  const bytes = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  const json = /^application\/(.+\+)?json\b/i.test(message.contentType);
  return {
    id: message.id,
    topic: message.topic,
    key: message.key,
    payload: json ? JSON.parse(bytes.toString('utf8')) : bytes.toString('base64'),
    payloadEncoding: json ? 'json' : 'base64',
    contentType: message.contentType,
    headers: message.headers,
    createdAt: message.createdAt.toISOString(),
  };
}
