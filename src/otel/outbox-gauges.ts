/**
 * @module `observeOutbox`: the outbox table's backlog, oldest pending age and dead letters as observable gauges,
 * counted once per metric collection rather than per event.
 */
import { type Attributes, diag, type Meter } from '@opentelemetry/api';
import { outboxStats } from '../messaging/outbox/maintenance.js';
import type { Queryable } from '../messaging/outbox/table.js';
import { outboxTable } from '../messaging/outbox/table.js';
import { topicList } from '../messaging/outbox/topics.js';
import { ATTR, METRIC, type MetricDefinition } from './names.js';

/** Anything that runs a query: a `pg` Pool or Client (typed here without `pg`, which `oncely/otel` does not need). */
export interface OutboxStatsSource {
  query(text: string, values?: unknown[]): Promise<{ readonly rows: readonly unknown[] }>;
}

export interface ObserveOutboxOptions {
  /** PostgreSQL schema holding `oncely_outbox`. Default `public`. */
  readonly schema?: string;
  /**
   * Count only these topics (the relay's `topics`), when applications share the table. The gauges then carry
   * `oncely.outbox.topics` (the names, sorted, comma-separated), so two applications' series stay apart.
   */
  readonly topics?: readonly string[];
}

/**
 * Backlog, oldest pending age and dead letters of one outbox table as observable gauges: the table is counted
 * (`outboxStats`, one scan) once per metric collection, not per event. Call it in one process per table (the
 * relay's, say): every process that calls it reports the same numbers. `stop()` removes the gauges' callback.
 */
export function observeOutbox(
  meter: Meter,
  db: OutboxStatsSource,
  options: ObserveOutboxOptions = {},
): { stop(): void } {
  const table = outboxTable(options.schema);
  const topics = topicList('observeOutbox', options.topics);
  const attributes: Attributes = { [ATTR.outboxTable]: `${table.schema}.oncely_outbox` };
  if (topics !== undefined) attributes[ATTR.outboxTopics] = [...topics].sort().join(',');
  const gauge = (m: MetricDefinition) =>
    meter.createObservableGauge(m.name, { unit: m.unit, description: m.description });
  const pending = gauge(METRIC.outboxPending);
  const oldest = gauge(METRIC.outboxOldestPendingAge);
  const dead = gauge(METRIC.outboxDeadLetters);
  const observe = async (result: Parameters<Parameters<Meter['addBatchObservableCallback']>[0]>[0]) => {
    try {
      const stats = await outboxStats(db as Queryable, {
        schema: table.schema,
        ...(topics === undefined ? {} : { topics }),
      });
      result.observe(pending, stats.pending, attributes);
      result.observe(oldest, stats.oldestPendingAgeMs / 1_000, attributes);
      result.observe(dead, stats.dead, attributes);
    } catch (error) {
      // An unreachable database leaves a gap in the gauges, never an exception in the exporter's loop.
      diag.warn(`oncely/otel: reading the outbox stats of ${table.name} failed`, error);
    }
  };
  meter.addBatchObservableCallback(observe, [pending, oldest, dead]);
  return { stop: () => meter.removeBatchObservableCallback(observe, [pending, oldest, dead]) };
}
