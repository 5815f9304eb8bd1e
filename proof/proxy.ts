// A TCP proxy between the app servers and the store, for the network faults the proof injects: a partition
// (nothing is forwarded either way, nothing is closed) and added latency. Extends the idea of
// test/support/tcp-proxy.ts with one difference that matters for a long run: bytes that arrive during a
// partition are HELD and delivered in order when it heals, as TCP retransmission would deliver them, instead of
// being dropped. Dropping bytes in the middle of a stream would desynchronise the Redis and PostgreSQL protocols
// and test the proxy, not the library; holding them delivers every command late, which is the real hazard (a
// `begin` or a `complete` that runs after its caller gave up).
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface FaultProxy {
  readonly port: number;
  readonly targetPort: number;
  /** Stop forwarding either way (held, not dropped) until `heal`. */
  partition(): void;
  heal(): void;
  /** Delay every chunk by `ms` in each direction (0: none). Order is kept. */
  setLatency(ms: number): void;
  /** Closes every open connection at once (both sides see a reset), as a broker restart or a failing link does. */
  reset(): void;
  /** While on, a new connection is reset as soon as it is accepted, as a server that is down refuses it. */
  refuse(on: boolean): void;
  /** The local ports of the proxy's open connections to the target: how the target names the app's sessions. */
  upstreamPorts(): number[];
  /** Connections open right now. */
  readonly connections: number;
  close(): Promise<void>;
}

interface Pending {
  readonly chunk: Buffer;
  readonly at: number;
}

export async function startFaultProxy(targetPort: number, listenPort = 0): Promise<FaultProxy> {
  let held = false;
  let refusing = false;
  let latencyMs = 0;
  const sockets = new Set<Socket>();
  const upstreams = new Set<Socket>();
  const pumps = new Set<() => void>();

  /** One direction of one connection: a FIFO released at each chunk's time, paused while held. */
  function forward(from: Socket, to: Socket): void {
    const queue: Pending[] = [];
    let timer: NodeJS.Timeout | undefined;
    let last = 0;
    const pump = () => {
      if (timer !== undefined || held) return;
      while (queue.length > 0) {
        const head = queue[0]!;
        const wait = head.at - Date.now();
        if (wait > 0) {
          timer = setTimeout(() => {
            timer = undefined;
            pump();
          }, wait);
          return;
        }
        queue.shift();
        if (!to.destroyed) to.write(head.chunk);
        if (held) return;
      }
    };
    pumps.add(pump);
    from.on('close', () => {
      pumps.delete(pump);
      if (timer !== undefined) clearTimeout(timer);
    });
    from.on('data', (chunk: Buffer) => {
      last = Math.max(last, Date.now() + latencyMs);
      queue.push({ chunk, at: last });
      pump();
    });
  }

  const server: Server = createServer((client) => {
    if (refusing) {
      client.on('error', () => {});
      client.resetAndDestroy();
      return;
    }
    const upstream = connect({ host: '127.0.0.1', port: targetPort });
    upstreams.add(upstream);
    upstream.on('close', () => upstreams.delete(upstream));
    for (const socket of [client, upstream]) {
      socket.setNoDelay(true);
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    forward(client, upstream);
    forward(upstream, client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listenPort, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address !== 'object') throw new Error('the proxy has no port');
  return {
    port: address.port,
    targetPort,
    partition: () => {
      held = true;
    },
    heal: () => {
      held = false;
      for (const pump of pumps) pump();
    },
    setLatency: (ms) => {
      latencyMs = ms;
    },
    reset: () => {
      for (const socket of sockets) socket.resetAndDestroy();
    },
    refuse: (on) => {
      refusing = on;
    },
    upstreamPorts: () =>
      [...upstreams].map((socket) => socket.localPort).filter((port): port is number => port !== undefined),
    get connections() {
      return sockets.size / 2;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
