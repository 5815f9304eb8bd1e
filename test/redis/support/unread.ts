/**
 * @module What a paused redis-server has not read, per client connection: the receive queue of the server's end of
 * each TCP connection on loopback (Linux `/proc/net/tcp`). A test that SIGSTOPs the server reads it to prove its
 * commands are on the wire, unanswered, whatever the client (ioredis shows its command queue; node-redis and GLIDE
 * show nothing of the kind).
 */
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

/** The local ports of the server's client connections now (`CLIENT LIST`), read before and after one connects. */
export async function clientPorts(admin: Redis): Promise<Set<number>> {
  const list = (await admin.client('LIST')) as string;
  return new Set([...list.matchAll(/addr=[^\s:]+:(\d+)/g)].map((match) => Number(match[1])));
}

/** Bytes the server on `serverPort` has received and not read yet, by the client's port (established ones only). */
export function unreadBytes(serverPort: number): Map<number, number> {
  const unread = new Map<number, number>();
  const port = (address: string) => Number.parseInt(address.split(':')[1]!, 16);
  // sl local_address rem_address st tx_queue:rx_queue ...; st 01 is ESTABLISHED.
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const [, local, remote, state, queues] = line.trim().split(/\s+/);
    if (local === undefined || remote === undefined || state !== '01' || queues === undefined) continue;
    if (port(local) !== serverPort) continue;
    unread.set(port(remote), Number.parseInt(queues.split(':')[1]!, 16));
  }
  return unread;
}
