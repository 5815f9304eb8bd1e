/**
 * @module Starts the example payments service (examples/payments) for the demo, from the build.
 */
import type { Pool } from 'pg';
import type { EventHandler } from '../../core/events.js';
import type { Store } from '../../core/store.js';

/** The shape of `examples/payments/server.ts`, which the build compiles to `dist/examples/payments/server.js`. */
export interface PaymentsServer {
  readonly url: string;
  executions(keys: readonly string[]): Promise<ReadonlyMap<string, number>>;
  close(): Promise<void>;
}

export interface PaymentsServerModule {
  startPaymentsServer(options: {
    store: Store;
    postgres?: { pool: Pool; schema?: string };
    port?: number;
    host?: string;
    processingMs?: number;
    onEvent?: EventHandler;
  }): Promise<PaymentsServer>;
}

/**
 * Loads the example payments service. It lives in `examples/` (it is the code the docs show a user writing) and
 * imports oncely by its public name, so the CLI reaches it through the built file rather than a source import.
 */
export async function loadPaymentsServer(): Promise<PaymentsServerModule> {
  const url = new URL('../../examples/payments/server.js', import.meta.url);
  return (await import(url.href)) as PaymentsServerModule;
}
