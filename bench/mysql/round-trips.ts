/**
 * @module Round trips of the MySQL benchmark, counted on the client: a view of a pool (`mysql2/promise`, `mariadb`
 * or pg) whose `query` and `execute`, and those of every connection it hands out (with `beginTransaction`,
 * `commit` and `rollback`, each one statement sent), count one message each. Every driver here answers a message
 * before the next one on a connection goes, a `CALL` is one message however many result sets come back, and pg's
 * `BEGIN; claim` is one message of two statements, so one call is one round trip. The view is a Proxy that binds
 * every other member to the real object: the mariadb connector's classes keep their state in private fields,
 * which a prototype copy could not reach.
 */

/** Messages sent while the view was used, and the first few texts, for people. */
export interface MessageLog {
  count: number;
  readonly texts: string[];
}

const KEPT_TEXTS = 8;
const SHOWN_CHARS = 70;
const COUNTED = ['query', 'execute'] as const;
// Each sends one statement of its own (`START TRANSACTION`, `COMMIT`, `ROLLBACK`) and waits for its answer.
const TRANSACTION_CALLS: Record<string, string> = {
  beginTransaction: 'START TRANSACTION',
  commit: 'COMMIT',
  rollback: 'ROLLBACK',
};

function textOf(args: readonly unknown[]): string {
  const first = args[0];
  if (typeof first === 'string') return first;
  // mysql2 and mariadb take `{ sql }`, pg `{ text }` (a named statement too).
  const config = first as { sql?: unknown; text?: unknown } | null;
  return String(config?.sql ?? config?.text ?? '?');
}

/** The run's own table or schema name shown as `bench`, so the listing reads the same from run to run. */
function record(log: MessageLog, text: string, runName: string): void {
  log.count += 1;
  if (log.texts.length >= KEPT_TEXTS) return;
  const line = text.replace(/\s+/g, ' ').replaceAll(runName, 'bench').trim();
  log.texts.push(line.length > SHOWN_CHARS ? `${line.slice(0, SHOWN_CHARS - 1)}…` : line);
}

/** `target` with the named methods counted into `log()` (the log of the moment: the caller switches it). */
function counting<T extends object>(
  target: T,
  log: () => MessageLog | undefined,
  runName: string,
  extra: Record<string, (call: (...args: unknown[]) => unknown, args: unknown[]) => unknown> = {},
): T {
  return new Proxy(target, {
    get(object, property) {
      const value = Reflect.get(object, property, object);
      if (typeof property !== 'string' || typeof value !== 'function') return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(object);
      const wrap = extra[property];
      if (wrap !== undefined) return (...args: unknown[]) => wrap(bound, args);
      const fixed = TRANSACTION_CALLS[property];
      if (fixed === undefined && !(COUNTED as readonly string[]).includes(property)) return bound;
      return (...args: unknown[]) => {
        const current = log();
        if (current !== undefined) record(current, fixed ?? textOf(args), runName);
        return bound(...args);
      };
    },
  });
}

/**
 * A view of `pool` that counts every message it and its connections send into the log `log()` returns (none:
 * not counted). Build the store and the handlers on the view; the pool's connections are the real ones.
 * `runName` (the run's table or schema) is shown as `bench` in the texts.
 */
export function countingPool<P extends object>(
  pool: P,
  log: () => MessageLog | undefined,
  runName: string,
): P {
  // mysql2 and mariadb hand out connections with getConnection(), pg with connect(): as a promise, or to a
  // callback (PostgresStore's checkout takes the callback form).
  const handOut = 'getConnection' in pool ? 'getConnection' : 'connect';
  const view = (connection: unknown) => counting(connection as object, log, runName);
  return counting(pool, log, runName, {
    [handOut]: (call, args) => {
      const callback = args.at(-1);
      if (typeof callback !== 'function') return (call(...args) as Promise<unknown>).then(view);
      return call(...args.slice(0, -1), (error: unknown, connection: unknown, ...rest: unknown[]) =>
        callback(
          error,
          connection === undefined || connection === null ? connection : view(connection),
          ...rest,
        ),
      );
    },
  });
}
