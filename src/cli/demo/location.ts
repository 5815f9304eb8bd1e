/**
 * @module Where the demo keeps its data when pointed at a real database or Redis: a place of its own, never the
 * application's. Its keys, outbox and payments live in the `oncely_demo` schema (PostgreSQL) or under the
 * `oncely_demo` prefix (Redis), and its relay is limited to its one topic, so a demo run next to an application
 * neither publishes nor deletes the application's outbox events (issue 23, defect 7).
 */
export const DEMO_SCHEMA = 'oncely_demo';
export const DEMO_PREFIX = 'oncely_demo';
/** The one topic the demo's payments service writes, and the only one its relay claims. */
export const DEMO_TOPIC = 'payment.created';

/** The `openStore` location of the demo's records, by store. */
export function demoLocation(kind: 'memory' | 'redis' | 'postgres'): { prefix?: string; schema?: string } {
  if (kind === 'redis') return { prefix: DEMO_PREFIX };
  if (kind === 'postgres') return { schema: DEMO_SCHEMA };
  return {};
}
