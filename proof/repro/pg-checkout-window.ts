// Reproduction of a crash the HTTP proof met in PostgreSQL transactional mode under `pg_terminate_backend`:
// an app server died of an unhandled 'error' event (57P01) emitted by a pg Client.
//
// Cause: `await pool.connect()` hands out a client whose pool 'error' listener pg-pool has already removed;
// the store attaches its own listener only when the awaiting code resumes, one microtask later. When the
// connection is new, pg-pool hands it out from inside pg's protocol parser (on the first ReadyForQuery), and if
// the same socket read also holds the server's FATAL (the backend was terminated right after it became ready),
// the parser emits 'error' on the client in that gap: no listener, so Node throws and the process exits.
//
// The proxy below makes that read deterministic: it appends a FATAL 57P01 ErrorResponse to the first
// ReadyForQuery of every connection, in the same write. Each case runs in a child process of its own:
//   tx-begin: PostgresStore#transactional() → Engine.begin (src/stores/postgres/transaction-run.ts,
//             `await runtime.connect()` then `client.on('error', onLost)`)
//   listen:   PostgresStore#waitFor → the LISTEN connection (src/stores/postgres/listener.ts,
//             `await pool.connect()` then `client.on('error', ...)`)
//
// Usage: node --import tsx proof/repro/pg-checkout-window.ts   (exit 1 when a case crashes the process)
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Engine } from '../../src/core/engine.js';
import { isStoreUnavailableError } from '../../src/core/errors.js';
import { PostgresStore } from '../../src/stores/postgres/index.js';
import { services } from '../../test/support/services.js';

function fatal57P01(): Buffer {
  const fields = Buffer.concat(
    [
      ['S', 'FATAL'],
      ['V', 'FATAL'],
      ['C', '57P01'],
      ['M', 'terminating connection due to administrator command'],
    ].map(([code, text]) => Buffer.concat([Buffer.from(code!), Buffer.from(`${text}\0`)])),
  );
  const body = Buffer.concat([fields, Buffer.from([0])]);
  const header = Buffer.alloc(5);
  header.write('E', 0);
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

/** A proxy to PostgreSQL that ends every connection with a FATAL in the same write as its first ReadyForQuery. */
async function terminatingProxy(target: number): Promise<number> {
  const server = createServer((client) => {
    const upstream = connect({ host: '127.0.0.1', port: target });
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream);
    let pending = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      // Walk whole messages (type byte + int32 length); find the first ReadyForQuery ('Z').
      let offset = 0;
      while (pending.length - offset >= 5) {
        const length = pending.readInt32BE(offset + 1);
        if (pending.length - offset < 1 + length) break;
        const type = String.fromCharCode(pending[offset]!);
        offset += 1 + length;
        if (type === 'Z') {
          client.end(Buffer.concat([pending.subarray(0, offset), fatal57P01()]));
          upstream.destroy();
          return;
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  return (server.address() as { port: number }).port;
}

async function child(which: string, url: string, schema: string): Promise<void> {
  process.on('uncaughtException', (error) => {
    process.stdout.write(
      `CRASH ${which}: uncaught ${(error as { code?: string }).code ?? ''} ${error.message}\n`,
    );
    process.exit(1);
  });
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => {});
  const store = new PostgresStore({ pool, schema });
  try {
    if (which === 'tx-begin') {
      const engine = new Engine({ store: store.transactional(), breaker: false });
      await engine.begin({ key: 'k', fingerprint: 'f' }).then(
        () => process.stdout.write('tx-begin: acquired?\n'),
        (error: unknown) =>
          process.stdout.write(
            `OK tx-begin: rejected (${isStoreUnavailableError(error) ? 'StoreUnavailableError' : error})\n`,
          ),
      );
    } else {
      // A rejection is an answer (the store could not be reached); only an 'error' event nobody hears crashes.
      await store.waitFor!('k', { timeoutMs: 300 }).then(
        (woke) => process.stdout.write(`OK listen: waitFor resolved ${woke}\n`),
        (error: unknown) =>
          process.stdout.write(
            `OK listen: rejected (${isStoreUnavailableError(error) ? 'StoreUnavailableError' : error})\n`,
          ),
      );
    }
    // Give a late 'error' a chance to surface.
    await new Promise((resolve) => setTimeout(resolve, 200));
  } finally {
    await pool.end().catch(() => {});
  }
  process.exit(0);
}

const [, , role, which, url, schema] = process.argv;
if (role === 'child') {
  await child(which!, url!, schema!);
} else {
  const admin = new pg.Pool({ connectionString: services.postgres.url, max: 1 });
  const schemaName = `oncely_repro_${randomBytes(3).toString('hex')}`;
  await new PostgresStore({ pool: admin, schema: schemaName }).migrate();
  const port = await terminatingProxy(Number(new URL(services.postgres.url).port || 5432));
  const via = new URL(services.postgres.url);
  via.port = String(port);
  let crashed = 0;
  try {
    for (const which of ['tx-begin', 'listen']) {
      // Not spawnSync: the proxy runs in this process.
      const result = await new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          ['--import', 'tsx', fileURLToPath(import.meta.url), 'child', which, via.toString(), schemaName],
          { encoding: 'utf8', timeout: 30_000 },
          (error, stdout, stderr) => resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
        );
      });
      process.stdout.write(result.stdout || `${which}: no output (exit ${result.status}) ${result.stderr}\n`);
      if (result.status !== 0) crashed++;
    }
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schemaName}" CASCADE`);
    await admin.end();
  }
  process.exit(crashed === 0 ? 0 : 1);
}
