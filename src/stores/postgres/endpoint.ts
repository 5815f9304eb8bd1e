/**
 * @module Where the PostgreSQL store's pool or client points, as telemetry names it (address, port, database,
 * table), read from the caller's configuration without connecting.
 */
import type { Client, Pool } from 'pg';
import type { StoreEndpoint } from '../../core/store.js';

/**
 * The PostgreSQL server as the pool or client was configured (its options or connection string), for telemetry.
 * What `pg` would take from the environment (`PGHOST`, …) is left out: only what the caller configured is known
 * without connecting.
 */
export function postgresEndpoint(
  source: { pool: Pool } | { client: Client },
  collection: string,
): StoreEndpoint {
  const configured = 'pool' in source ? fromOptions(source.pool.options) : fromClient(source.client);
  return { system: 'postgresql', ...configured, collection };
}

type Located = { address?: string; port?: number; namespace?: string };

function fromClient(client: Client): Located {
  return located(client.host, client.port, client.database);
}

function fromOptions(options: Pool['options']): Located {
  const { connectionString } = options;
  let url: URL | undefined;
  try {
    url = connectionString === undefined ? undefined : new URL(connectionString);
  } catch {
    // A key=value connection string: nothing to read without pg's own parser.
  }
  const path = url?.pathname.slice(1);
  return located(
    options.host ?? (url?.hostname === '' ? undefined : url?.hostname),
    options.port ?? (url?.port ? Number(url.port) : undefined),
    options.database ?? (path === '' ? undefined : path && decodeURIComponent(path)),
  );
}

function located(address: unknown, port: unknown, namespace: unknown): Located {
  return {
    ...(typeof address === 'string' && address !== '' ? { address } : {}),
    ...(typeof port === 'number' && Number.isInteger(port) ? { port } : {}),
    ...(typeof namespace === 'string' && namespace !== '' ? { namespace } : {}),
  };
}
