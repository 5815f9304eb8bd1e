import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /**
   * A silent partition: from now on nothing is forwarded either way and nothing is closed, so callers see no
   * error, only silence (a dropped route, a stalled middlebox), until `heal`.
   */
  blackhole(): void;
  heal(): void;
  /**
   * The next `count` responses are lost on their way back, after the server sent them (an oncely server has
   * stored the outcome by then): the first bytes the server sends on a connection are dropped, and then either
   * both sides are closed (`'reset'`: the client sees the connection cut) or the connection stays open and
   * silent (`'silent'`: the client hears nothing until it gives up on the attempt).
   */
  loseResponses(count: number, how?: 'reset' | 'silent'): void;
  close(): Promise<void>;
}

/** A TCP proxy on a free loopback port in front of `targetPort`, for network faults a test injects itself. */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let silent = false;
  let losses: { count: number; how: 'reset' | 'silent' } = { count: 0, how: 'reset' };
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect({ host: '127.0.0.1', port: targetPort });
    let losing = false;
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    // Bytes that arrive during a partition are dropped, as a network that loses packets would.
    client.on('data', (chunk) => {
      if (!silent) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!losing && losses.count > 0) {
        losses.count--;
        losing = true;
        if (losses.how === 'reset') client.destroy();
      }
      if (!silent && !losing) client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address !== 'object') throw new Error('the proxy has no port');
  return {
    port: address.port,
    blackhole: () => {
      silent = true;
    },
    heal: () => {
      silent = false;
    },
    loseResponses: (count, how = 'reset') => {
      losses = { count, how };
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
