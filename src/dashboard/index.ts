/**
 * @module `oncely/dashboard`: one page for operators, as request handlers to mount behind your own authentication
 * (`dashboard`), and the event log that feeds its event and rate panels (`EventLog`). Needs no peer package of its
 * own: it reads through the ioredis client or `pg` pool you pass. See docs/dashboard.md.
 */

export type { DashboardStoreSource } from './board-source.js';
export { type EventBatch, EventLog, type EventLogOptions } from './events/log.js';
export { type Dashboard, dashboard } from './handler.js';
export type * from './model.js';
export type { DashboardOptions } from './options.js';
export type { DashboardSource } from './source.js';
