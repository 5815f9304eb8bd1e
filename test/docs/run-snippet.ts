// Runs one documentation block for snippets-run.test.ts: `node --import tsx test/docs/run-snippet.ts <block.ts>`.
// Exits 0 when the block ran to its end and every HTTP server it started answered a retried POST /payments with
// a replay; 1 otherwise, with the reason on stderr. It exits as soon as that is known: a block that starts a
// server, a relay or a consumer is meant to keep running, so waiting for the process to empty would never end.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';

const [file] = process.argv.slice(2);
if (file === undefined) throw new Error('usage: run-snippet.ts <block.ts>');

// Blocks listen on fixed ports (3000) as a reader's app would; on a shared machine that port may be taken, so
// every listen is moved to a free port, and each server is remembered to be checked below.
const servers: net.Server[] = [];
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (this: net.Server, ...args: unknown[]) {
  servers.push(this);
  const [first, ...rest] = args;
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) args = [0, ...rest];
  else if (typeof first === 'object' && first !== null && 'port' in first)
    args = [{ ...first, port: 0 }, ...rest];
  return (listen as (...a: unknown[]) => net.Server).apply(this, args);
} as typeof listen;

/**
 * What every payments route in the docs promises: the first POST runs and answers 2xx, the retry with the same
 * key gets the same status and bytes back, marked `Idempotent-Replayed: true`.
 */
async function checkPayments(server: net.Server): Promise<void> {
  if (!server.listening)
    await within(once(server, 'listening'), 10_000, 'the server never started listening');
  const { address, port } = server.address() as AddressInfo;
  const host =
    address === '::' || address === '0.0.0.0'
      ? '127.0.0.1'
      : address.includes(':')
        ? `[${address}]`
        : address;
  const url = `http://${host}:${port}/payments`;
  const key = `docs-${randomUUID()}`;
  const send = async () => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ amount: 1999, currency: 'EUR' }),
    });
    return {
      status: response.status,
      replayed: response.headers.get('idempotent-replayed'),
      body: await response.text(),
    };
  };
  const first = await send();
  if (first.status < 200 || first.status > 299)
    throw new Error(`POST ${url} answered ${first.status}: ${first.body}`);
  const retry = await send();
  if (retry.status !== first.status || retry.body !== first.body || retry.replayed !== 'true') {
    throw new Error(
      `the retry of POST ${url} was not a replay: ${JSON.stringify(first)} then ${JSON.stringify(retry)}`,
    );
  }
}

function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(message)), ms).unref()),
  ]);
}

try {
  // Nothing is loaded before the block: it runs with what it imports and defines, as pasted into an empty file.
  await import(pathToFileURL(file).href);
  for (const server of servers) await checkPayments(server);
  // A moment for a rejection the block left unhandled (a consumer loop failing on its first read) to surface.
  await new Promise((resolve) => setTimeout(resolve, 200));
  process.stdout.write(`ran to the end; ${servers.length} HTTP server(s) answered a retry with a replay\n`);
  process.exit(0);
} catch (error) {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}
