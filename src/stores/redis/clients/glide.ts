/**
 * @module The transport on Valkey GLIDE (`@valkey/valkey-glide` >= 2): `GlideClient` and `GlideClusterClient`.
 * Scripts go by EVALSHA with the EVAL fallback through `customCommand` (routed to the key's primary on a Cluster),
 * replies decoded as bytes (`Decoder.Bytes`). GLIDE's core multiplexes one connection per node and writes the
 * requests that are waiting together, so a batch is its calls sent back to back. A GLIDE client cannot be
 * duplicated (its configuration is not readable), so `waitFor` polls unless a second client is passed as
 * `subscriber`; the store subscribes on that one and reads its messages with `getPubSubMessage()`.
 */
import { StoreUnavailableError } from '../../../core/errors.js';
import type { NodeCommand, RedisNode, RedisTransport, ScriptCall, SettleSubscriber } from '../transport.js';
import { evalshaWords, evalWords, isNoScript, runBySha, type Words } from './evalsha.js';

/** A GLIDE `GlideClient` or `GlideClusterClient` as the store accepts it (by shape: the package is an optional peer). */
export interface GlideClientLike {
  customCommand(...args: never[]): Promise<unknown>;
  invokeScript(...args: never[]): Promise<unknown>;
}

/** `Decoder.Bytes`: bulk replies as Buffers. */
const BYTES_DECODER = 0;

type Route =
  | { readonly type: 'primarySlotKey'; readonly key: string }
  | { readonly type: 'routeByAddress'; readonly host: string; readonly port: number }
  | 'randomNode';

interface Glide extends GlideClientLike {
  customCommand(args: Words, options?: { decoder?: number; route?: Route }): Promise<unknown>;
  fcallWithRoute?: unknown;
  subscribeLazy(channels: Iterable<string>): Promise<void>;
  unsubscribeLazy(channels: Iterable<string>): Promise<void>;
  getPubSubMessage(): Promise<{ channel: string | Buffer }>;
}

export function isGlideShaped(value: object): value is GlideClientLike {
  const client = value as Partial<Glide>;
  return typeof client.customCommand === 'function' && typeof client.invokeScript === 'function';
}

export class GlideTransport implements RedisTransport {
  /** The store batches a turn's calls (`scripts`): these clients have no socket to cork. */
  readonly send = undefined;
  readonly family = 'glide';
  readonly keyPrefix = '';
  readonly endpoint = { system: 'redis' } as const;
  readonly #client: Glide;
  readonly #cluster: boolean;
  readonly #subscriber: Glide | undefined;

  constructor(client: GlideClientLike, subscriber: GlideClientLike | undefined) {
    this.#client = client as Glide;
    this.#subscriber = subscriber as Glide | undefined;
    // Only the Cluster client routes a function call; the standalone one has no such method.
    this.#cluster = typeof this.#client.fcallWithRoute === 'function';
  }

  /** GLIDE tells no connection state: it reconnects on its own and bounds each request by its `requestTimeout`. */
  gate(): undefined {
    return undefined;
  }

  scripts(calls: readonly ScriptCall[]): Promise<unknown>[] {
    return calls.map((call) => runBySha((words) => this.#send(call.key, words), call));
  }

  async scriptAndWait(call: ScriptCall, replicas: number, timeoutMs: number): Promise<[unknown, unknown]> {
    const wait = ['WAIT', String(replicas), String(timeoutMs)];
    const pair = (script: Words) =>
      Promise.allSettled([this.#send(call.key, script), this.#send(call.key, wait)]);
    let [script, acknowledged] = await pair(evalshaWords(call));
    if (script.status === 'rejected' && isNoScript(script.reason)) {
      [script, acknowledged] = await pair(evalWords(call));
    }
    if (script.status === 'rejected') throw script.reason;
    if (acknowledged.status === 'rejected') throw acknowledged.reason;
    return [script.value, acknowledged.value];
  }

  async nodes(): Promise<readonly RedisNode[]> {
    const client = this.#client;
    if (!this.#cluster)
      return [new GlideNode((words) => client.customCommand(words, { decoder: BYTES_DECODER }))];
    const listing = await client.customCommand(['CLUSTER', 'NODES'], {
      route: 'randomNode',
      decoder: BYTES_DECODER,
    });
    return primariesOf(String(listing)).map(
      ({ host, port }) =>
        new GlideNode((words) =>
          client.customCommand(words, {
            route: { type: 'routeByAddress', host, port },
            decoder: BYTES_DECODER,
          }),
        ),
    );
  }

  subscriber(): SettleSubscriber | undefined {
    return this.#subscriber === undefined ? undefined : new GlideSubscriber(this.#subscriber);
  }

  #send(key: string, words: Words): Promise<unknown> {
    return this.#cluster
      ? this.#client.customCommand(words, {
          route: { type: 'primarySlotKey', key },
          decoder: BYTES_DECODER,
        })
      : this.#client.customCommand(words, { decoder: BYTES_DECODER });
  }
}

/** The primaries of `CLUSTER NODES` that are not failing: `<id> <ip:port@cport[,hostname]> <flags> …`. */
function primariesOf(listing: string): Array<{ host: string; port: number }> {
  return listing.split('\n').flatMap((line) => {
    const [, address, flags] = line.split(' ');
    if (address === undefined || flags === undefined) return [];
    const roles = flags.split(',');
    if (!roles.includes('master') || roles.includes('fail') || roles.includes('noaddr')) return [];
    const hostPort = address.split('@')[0] ?? '';
    const colon = hostPort.lastIndexOf(':');
    return [{ host: hostPort.slice(0, colon), port: Number(hostPort.slice(colon + 1)) }];
  });
}

class GlideNode implements RedisNode {
  readonly #send: (words: Words) => Promise<unknown>;

  constructor(send: (words: Words) => Promise<unknown>) {
    this.#send = send;
  }

  send(commands: readonly NodeCommand[]): Promise<unknown[]> {
    return Promise.all(
      commands.map((command) =>
        this.#send(command.map(String)).catch((error: unknown) =>
          error instanceof Error ? error : new StoreUnavailableError(String(error)),
        ),
      ),
    );
  }
}

/**
 * Pub/sub on the caller's second GLIDE client: dynamic SUBSCRIBE (GLIDE 2.x, RESP3), messages read one by one
 * with `getPubSubMessage()`. A client configured with a message callback cannot be read that way: the loop then
 * ends and waiters poll.
 */
class GlideSubscriber implements SettleSubscriber {
  readonly #connection: Glide;
  #listening = false;

  constructor(connection: Glide) {
    this.#connection = connection;
  }

  subscribe(channel: string): Promise<unknown> {
    return this.#connection.subscribeLazy([channel]);
  }

  unsubscribe(channel: string): Promise<unknown> {
    return this.#connection.unsubscribeLazy([channel]);
  }

  listen(listener: (channel: string) => void): void {
    this.#listening = true;
    void (async () => {
      while (this.#listening) {
        const message = await this.#connection.getPubSubMessage().catch(() => undefined);
        if (message === undefined) return;
        if (this.#listening) listener(String(message.channel));
      }
    })();
  }

  stop(): void {
    this.#listening = false;
  }
}
