/**
 * A TCP proxy in front of MariaDB that, when armed, cuts the connection that sends the next `COMMIT` instead of
 * passing it on: the server never commits and rolls the transaction back when it sees the socket close, while the
 * client's COMMIT fails with a lost connection, so it cannot know whether it committed. That is the commit failure
 * of the MySQL suite (MySQL has no deferred constraint to refuse a COMMIT with, as the PostgreSQL suite's does).
 *
 * It reads the client's packets (3-byte length, sequence number, payload) and looks at COM_QUERY (0x03) payloads;
 * everything is forwarded as it came, so no driver notices the proxy.
 */
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';

const COM_QUERY = 0x03;

export interface CommitCutter {
  /** `mysql://root@127.0.0.1:<port>/<database>`: the server through the proxy. */
  urlFor(database: string): string;
  readonly port: number;
  /** Cuts the connection of the next COMMIT seen (once). */
  arm(): void;
  /** How many COMMITs were cut so far. */
  readonly cuts: number;
  close(): Promise<void>;
}

export async function commitCutter(target: { host: string; port: number }): Promise<CommitCutter> {
  let armed = false;
  let cuts = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = tcpConnect(target.port, target.host);
    sockets.add(client);
    sockets.add(upstream);
    let pending = Buffer.alloc(0);
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      // Whole packets only: a COMMIT is judged on its complete payload.
      while (pending.length >= 4) {
        const length = pending.readUIntLE(0, 3);
        if (pending.length < 4 + length) break;
        const packet = pending.subarray(0, 4 + length);
        pending = pending.subarray(4 + length);
        if (armed && packet[4] === COM_QUERY && isCommit(packet.subarray(5).toString('utf8'))) {
          armed = false;
          cuts += 1;
          cut();
          return;
        }
        upstream.write(packet);
      }
    });
    upstream.on('data', (chunk) => client.write(chunk));
    for (const socket of [client, upstream]) {
      socket.on('error', cut);
      socket.on('close', () => {
        sockets.delete(socket);
        cut();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    urlFor: (database) => `mysql://root@127.0.0.1:${port}/${database}`,
    port,
    arm() {
      armed = true;
    },
    get cuts() {
      return cuts;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function isCommit(query: string): boolean {
  return /^\s*commit\s*;?\s*$/i.test(query);
}
