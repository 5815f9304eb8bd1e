import { connect } from 'node:net';

/**
 * Where the machine's services live and how to start one that is down. Tests call `requireService` in
 * `beforeAll`: an unreachable service fails the test with this message, never a silent skip.
 */
export const services = {
  redis: {
    url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    host: '127.0.0.1',
    port: 6379,
    start:
      'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log',
  },
  postgres: {
    url: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    host: '127.0.0.1',
    port: 5432,
    start: 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start',
  },
  rabbitmq: {
    url: process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
    host: '127.0.0.1',
    port: 5672,
    start: 'rabbitmq-server -detached',
  },
  nats: {
    url: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    host: '127.0.0.1',
    port: 4222,
    start:
      'start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log',
  },
  mariadb: {
    url: process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test',
    host: '127.0.0.1',
    port: 3306,
    start: 'start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd',
  },
} as const;

export type ServiceName = keyof typeof services;

/** Resolves when the service accepts TCP connections; otherwise throws an error that says how to start it. */
export async function requireService(name: ServiceName, timeoutMs = 3_000): Promise<void> {
  const { host, port, start } = services[name];
  const reachable = await new Promise<boolean>((resolve) => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => done(false), timeoutMs);
    function done(ok: boolean) {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    }
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
  if (!reachable) {
    throw new Error(
      `${name} is not reachable at ${host}:${port}. Start it with:\n  ${start}\n(.ci/run starts it for you.)`,
    );
  }
}
