// A storm client process: for each target, fires `perKey` concurrent identical requests for every key at once
// (spread over the servers' URLs, at most `SOCKETS` connections per server), and prints what came back.
import { createHash } from 'node:crypto';
import { Agent, request } from 'node:http';

interface Target {
  readonly name: string;
  readonly urls: readonly string[];
  /** Keys of this target only: two adapters serving the same route on one store would share records. */
  readonly keys: readonly string[];
}
interface Config {
  readonly targets: readonly Target[];
  readonly perKey: number;
}
interface Answer {
  readonly status: number;
  readonly replayed: boolean;
  readonly body: Buffer;
}

// Enough connections that a key's 50 requests from this process are all in flight together, few enough that
// the kernel's accept queue never overflows (a reset would be the client's doing, not the server's).
const SOCKETS = 128;
let agent = new Agent({ keepAlive: true, maxSockets: SOCKETS });
const BODY = '{"amount":100,"currency":"EUR"}';

function post(url: string, key: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'idempotency-key': key,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(BODY),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            replayed: response.headers['idempotent-replayed'] === 'true',
            body: Buffer.concat(chunks),
          }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(BODY);
  });
}

const config = JSON.parse(process.env.STORM_CONFIG ?? '{}') as Config;
const results: Record<
  string,
  Record<string, { statuses: Record<string, number>; bodies: string[]; replayed: number }>
> = {};

for (const target of config.targets) {
  // Fresh connections per target: a kept-alive socket idle through the other targets' rounds may be closed by
  // the server just as it is reused.
  agent.destroy();
  agent = new Agent({ keepAlive: true, maxSockets: SOCKETS });
  const byKey: (typeof results)[string] = {};
  results[target.name] = byKey;
  await Promise.all(
    target.keys.flatMap((key) => {
      const entry = { statuses: {} as Record<string, number>, bodies: [] as string[], replayed: 0 };
      byKey[key] = entry;
      return Array.from({ length: config.perKey }, async (_, index) => {
        const answer = await post(target.urls[index % target.urls.length]!, key);
        entry.statuses[answer.status] = (entry.statuses[answer.status] ?? 0) + 1;
        if (answer.replayed) entry.replayed++;
        if (answer.status >= 200 && answer.status < 300) {
          const digest = createHash('sha256').update(answer.body).digest('hex');
          if (!entry.bodies.includes(digest)) entry.bodies.push(digest);
        }
      });
    }),
  );
}
agent.destroy();
process.stdout.write(JSON.stringify(results));
