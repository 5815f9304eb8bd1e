/**
 * @module `sqsIdempotency`: SQS batches through the inbox, one claim per record, answered with a partial batch
 * response so only the records that failed are delivered again.
 */
import { ENGINE_OPTION_NAMES } from '../core/engine-options.js';
import { InvalidOptionsError } from '../core/errors.js';
import { knownOptions, optionalFunction } from '../core/validate.js';
import { Inbox, type InboxContext, type InboxOptions, type InboxOutcome } from '../messaging/consumer.js';
import type { LambdaContext, SqsBatchResponse, SqsRecord } from './events.js';
import { deadlineOf } from './invocation.js';

// The inbox's options, with `key` in place of `messageId` (SQS names its own id so).
const OPTIONS = [...ENGINE_OPTION_NAMES, 'key', 'scope', 'maxAttempts', 'onParked', 'codec'];

export interface SqsIdempotencyOptions<Rec extends SqsRecord = SqsRecord>
  extends Omit<InboxOptions<Rec>, 'messageId'> {
  /**
   * A record's idempotency key. Default: its SQS `messageId`, the same on every delivery of one message. Derive
   * it from the body (an event id) when a producer may send one event as two messages.
   */
  readonly key?: (record: Rec) => string;
}

/** What a record handler gets besides the record: the claim (token, attempt, signal) and the Lambda context. */
export interface SqsRecordContext<C extends LambdaContext = LambdaContext> extends InboxContext {
  readonly lambda: C;
}

export type SqsRecordHandler<Rec extends SqsRecord, C extends LambdaContext, R> = (
  record: Rec,
  context: SqsRecordContext<C>,
) => Promise<R> | R;

export type SqsBatchHandler<Rec extends SqsRecord, C extends LambdaContext> = (
  event: { readonly Records: readonly Rec[] },
  context: C,
) => Promise<SqsBatchResponse>;

/**
 * Per-record idempotency for SQS batches, with the partial batch response: each record runs once however often
 * SQS delivers it (the inbox, keyed by `messageId` or `key`), and the handler returns `{ batchItemFailures }`
 * naming the records to deliver again (the event source mapping needs `ReportBatchItemFailures`). A record that
 * threw, is being processed by another invocation, or could not be recorded (store down) is a failure; one that
 * ran before is a success without running. A FIFO queue's batch stops at its first failure, and the records after
 * it are failures too, so a message group keeps its order. Each record's lease ends with the invocation
 * (`getRemainingTimeInMillis`): after a timeout, the next delivery takes the record over at once.
 *
 * @example
 * import { sqsIdempotency } from 'oncely/lambda';
 *
 * export const handler = sqsIdempotency({ store: new RedisStore({ client }) })(async (record, { token }) => {
 *   await ship(JSON.parse(record.body), token);
 * });
 */
export function sqsIdempotency<Rec extends SqsRecord = SqsRecord>(
  options: SqsIdempotencyOptions<Rec>,
): <Own extends Rec, C extends LambdaContext, R>(
  handler: SqsRecordHandler<Own, C, R>,
) => SqsBatchHandler<Own, C> {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionsError('oncely/lambda: sqsIdempotency needs options ({ store })');
  knownOptions('oncely/lambda sqsIdempotency', options, OPTIONS);
  const { key, scope = 'sqs', onParked, ...inboxOptions } = options;
  optionalFunction('key', key);
  optionalFunction('onParked', onParked);
  const keyOf = key ?? ((record: Rec) => record.messageId);
  // `Own`: the record type the handler declares (`SQSRecord` of @types/aws-lambda), inferred from it.
  return <Own extends Rec, C extends LambdaContext, R>(handler: SqsRecordHandler<Own, C, R>) => {
    if (typeof handler !== 'function')
      throw new InvalidOptionsError('oncely/lambda: wrap a function (record, context) => result');
    // Each record travels with its invocation's context, so two invocations in one process never mix them up.
    const inbox = new Inbox<Delivery<Own, C>, R>(
      ({ record, lambda }, context) => handler(record, Object.assign(context, { lambda })),
      {
        ...inboxOptions,
        scope,
        messageId: ({ record }) => keyOf(record),
        ...(onParked === undefined ? {} : { onParked: ({ record }, info) => onParked(record, info) }),
      },
    );
    return async function idempotentSqsHandler(
      event: { readonly Records: readonly Own[] },
      context: C,
    ): Promise<SqsBatchResponse> {
      const leaseUntil = deadlineOf(context);
      const failures: { itemIdentifier: string }[] = [];
      let stopped = false;
      for (const record of event.Records) {
        if (stopped) {
          failures.push({ itemIdentifier: record.messageId });
          continue;
        }
        const outcome = await inbox.handle(
          { record, lambda: context },
          {
            redelivered: Number(record.attributes?.ApproximateReceiveCount ?? '1') > 1,
            ...(leaseUntil === undefined ? {} : { leaseUntil }),
          },
        );
        if (succeeded(outcome)) continue;
        failures.push({ itemIdentifier: record.messageId });
        // FIFO: a record after a failed one must not run before it does (SQS redelivers both, in order).
        if (record.eventSourceARN?.endsWith('.fifo') === true) stopped = true;
      }
      return { batchItemFailures: failures };
    };
  };
}

/**
 * Processed now or before: SQS may delete it. Busy, failed, invalid and parked records are reported failed, so SQS
 * delivers them again and the queue's redrive policy moves a message that keeps failing to its dead-letter queue.
 */
function succeeded(outcome: InboxOutcome<unknown>): boolean {
  return outcome.kind === 'processed' || outcome.kind === 'duplicate';
}

interface Delivery<Rec, C> {
  readonly record: Rec;
  readonly lambda: C;
}
