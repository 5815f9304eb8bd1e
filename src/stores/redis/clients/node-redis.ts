/**
 * @module The transport on node-redis (`redis` >= 5): `createClient()`, `createCluster()` and `createSentinel()`.
 * Scripts go by EVALSHA with the EVAL fallback (node-redis registers scripts only when a client is created, so a
 * store handed one cannot add its own), bulk replies come back as Buffers through a per-command `typeMapping`, and
 * node-redis writes every command issued in one tick together, so a batch is simply its calls sent back to back.
 */
import { StoreUnavailableError } from '../../../core/errors.js';
import type { StoreEndpoint } from '../../../core/store.js';
import { ConnectionGate, type GatedClient } from '../connection.js';
import type { NodeCommand, RedisNode, RedisTransport, ScriptCall, SettleSubscriber } from '../transport.js';
import { evalshaWords, evalWords, isNoScript, runBySha, type Words } from './evalsha.js';

/** A node-redis client, Cluster or Sentinel as the store accepts it (by shape: the package is an optional peer). */
export interface NodeRedisClientLike {
  readonly isOpen: boolean;
  sendCommand(...args: never[]): Promise<unknown>;
}

/** `RESP_TYPES.BLOB_STRING` (the byte `$`) mapped to Buffer: bulk replies as bytes, whatever the client's mapping. */
const BYTES = { typeMapping: { 36: Buffer } } as const;

type Listener = (message: string, channel: string) => void;

/** What the store uses of every node-redis flavour. */
interface Common extends NodeRedisClientLike {
  readonly isReady?: boolean;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  once(event: string, listener: (...args: unknown[]) => void): unknown;
  subscribe(channel: string, listener: Listener): Promise<unknown>;
  unsubscribe(channel: string, listener?: Listener): Promise<unknown>;
}

interface Standalone extends Common {
  readonly options?: {
    readonly url?: string;
    readonly database?: number;
    readonly socket?: { readonly host?: string; readonly port?: number; readonly path?: string };
  };
  sendCommand(args: Words, options?: typeof BYTES): Promise<unknown>;
  duplicate(): Standalone & { connect(): Promise<unknown>; destroy(): void };
}

interface ClusterClient extends Common {
  readonly masters: ReadonlyArray<object>;
  nodeClient(master: object): Standalone | Promise<Standalone>;
  sendCommand(
    firstKey: string | undefined,
    readonly: boolean,
    args: Words,
    options?: typeof BYTES,
  ): Promise<unknown>;
  duplicate(): ClusterClient & { connect(): Promise<unknown>; destroy(): void };
}

interface SentinelClient extends Common {
  getSentinelNode(): unknown;
  sendCommand(readonly: boolean, args: Words, options?: typeof BYTES): Promise<unknown>;
}

/** A node-redis object: `sendCommand` and `isOpen`, and no ioredis `defineCommand`. */
export function isNodeRedisShaped(value: object): value is NodeRedisClientLike {
  const client = value as Partial<Common> & { defineCommand?: unknown };
  return (
    typeof client.sendCommand === 'function' &&
    typeof client.isOpen === 'boolean' &&
    typeof client.subscribe === 'function' &&
    client.defineCommand === undefined
  );
}

type Flavour =
  | { readonly kind: 'client'; readonly client: Standalone }
  | { readonly kind: 'cluster'; readonly client: ClusterClient }
  | { readonly kind: 'sentinel'; readonly client: SentinelClient };

function flavourOf(client: NodeRedisClientLike): Flavour {
  if (typeof (client as Partial<ClusterClient>).nodeClient === 'function')
    return { kind: 'cluster', client: client as ClusterClient };
  if (typeof (client as Partial<SentinelClient>).getSentinelNode === 'function')
    return { kind: 'sentinel', client: client as SentinelClient };
  return { kind: 'client', client: client as Standalone };
}

export class NodeRedisTransport implements RedisTransport {
  /** The store batches a turn's calls (`scripts`): these clients have no socket to cork. */
  readonly send = undefined;
  readonly family = 'node-redis';
  readonly keyPrefix = '';
  readonly #flavour: Flavour;
  readonly #subscriber: NodeRedisClientLike | undefined;
  readonly #gate: ConnectionGate;

  constructor(
    client: NodeRedisClientLike,
    subscriber: NodeRedisClientLike | undefined,
    connectWaitMs: number,
  ) {
    this.#flavour = flavourOf(client);
    this.#subscriber = subscriber;
    this.#gate = new ConnectionGate(new NodeRedisStatus(client as Common), connectWaitMs);
  }

  get endpoint(): StoreEndpoint {
    const flavour = this.#flavour;
    if (flavour.kind !== 'client') return { system: 'redis' };
    const { url, database, socket } = flavour.client.options ?? {};
    const namespace = String(database ?? (url === undefined ? 0 : databaseOf(url)));
    if (typeof socket?.path === 'string') return { system: 'redis', address: socket.path, namespace };
    const parsed = url === undefined ? undefined : safeUrl(url);
    const host = socket?.host ?? parsed?.hostname ?? 'localhost';
    const port = socket?.port ?? (parsed?.port ? Number(parsed.port) : 6379);
    return { system: 'redis', address: host, port, namespace };
  }

  gate(operation: string): Promise<void> | undefined {
    return this.#gate.check(operation);
  }

  scripts(calls: readonly ScriptCall[]): Promise<unknown>[] {
    return calls.map((call) => runBySha((words) => this.#send(call.key, words), call));
  }

  async scriptAndWait(call: ScriptCall, replicas: number, timeoutMs: number): Promise<[unknown, unknown]> {
    const wait = ['WAIT', String(replicas), String(timeoutMs)];
    // Sent in one tick, both go out in one write on the key's connection, the script first.
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
    const flavour = this.#flavour;
    if (flavour.kind === 'client')
      return [new NodeRedisNode((words) => flavour.client.sendCommand(words, BYTES))];
    if (flavour.kind === 'sentinel')
      return [new NodeRedisNode((words) => flavour.client.sendCommand(false, words, BYTES))];
    const masters = await Promise.all(flavour.client.masters.map((m) => flavour.client.nodeClient(m)));
    return masters.map((master) => new NodeRedisNode((words) => master.sendCommand(words, BYTES)));
  }

  subscriber(): SettleSubscriber {
    if (this.#subscriber !== undefined) return new NodeRedisSubscriber(this.#subscriber as Common, undefined);
    const flavour = this.#flavour;
    // A Sentinel client subscribes on a connection of its own already (its pub/sub proxy).
    if (flavour.kind === 'sentinel') return new NodeRedisSubscriber(flavour.client, undefined);
    const made = flavour.client.duplicate();
    made.on('error', () => {
      // Reconnects are automatic and waiters poll meanwhile; an unhandled 'error' event would crash the process.
    });
    return new NodeRedisSubscriber(made, made);
  }

  #send(key: string, words: Words): Promise<unknown> {
    const flavour = this.#flavour;
    if (flavour.kind === 'client') return flavour.client.sendCommand(words, BYTES);
    if (flavour.kind === 'cluster') return flavour.client.sendCommand(key, false, words, BYTES);
    return flavour.client.sendCommand(false, words, BYTES);
  }
}

/**
 * node-redis' state in ioredis' words for the gate: ready, connecting (first connect, waited for), reconnecting
 * (after a drop: refused at once), end (closed). node-redis tells a reconnect only by its event.
 */
class NodeRedisStatus implements GatedClient {
  readonly #client: Common;
  #reconnecting = false;

  constructor(client: Common) {
    this.#client = client;
    client.on('reconnecting', () => {
      this.#reconnecting = true;
    });
    client.on('ready', () => {
      this.#reconnecting = false;
    });
  }

  get status(): string {
    const client = this.#client;
    if (!client.isOpen) return 'end';
    // A Cluster has no isReady: open is as ready as it tells.
    if (client.isReady ?? true) return 'ready';
    return this.#reconnecting ? 'reconnecting' : 'connecting';
  }

  once(event: 'ready', listener: () => void): unknown {
    return this.#client.once(event, listener);
  }
}

class NodeRedisNode implements RedisNode {
  readonly #send: (words: Words) => Promise<unknown>;

  constructor(send: (words: Words) => Promise<unknown>) {
    this.#send = send;
  }

  send(commands: readonly NodeCommand[]): Promise<unknown[]> {
    // Issued in one tick: node-redis writes them together, one round trip.
    return Promise.all(
      commands.map((command) =>
        this.#send(command.map(String)).catch((error: unknown) =>
          error instanceof Error ? error : new StoreUnavailableError(String(error)),
        ),
      ),
    );
  }
}

class NodeRedisSubscriber implements SettleSubscriber {
  readonly #connection: Common;
  /** The duplicate the store made (connected on first use, closed by `stop`); undefined for a caller's. */
  readonly #made: (Common & { connect(): Promise<unknown>; destroy(): void }) | undefined;
  #connected: Promise<unknown> | undefined;
  #listener: ((channel: string) => void) | undefined;
  readonly #onMessage: Listener = (_message, channel) => this.#listener?.(channel);

  constructor(
    connection: Common,
    made: (Common & { connect(): Promise<unknown>; destroy(): void }) | undefined,
  ) {
    this.#connection = connection;
    this.#made = made;
  }

  async subscribe(channel: string): Promise<unknown> {
    if (this.#made !== undefined) {
      this.#connected ??= this.#made.connect();
      await this.#connected;
    }
    return this.#connection.subscribe(channel, this.#onMessage);
  }

  async unsubscribe(channel: string): Promise<unknown> {
    return this.#connection.unsubscribe(channel, this.#onMessage);
  }

  listen(listener: (channel: string) => void): void {
    this.#listener = listener;
  }

  stop(): void {
    this.#listener = undefined;
    const made = this.#made;
    // A duplicate still connecting is closed once up (destroy() refuses a client that is not open yet).
    if (made !== undefined && this.#connected !== undefined)
      this.#connected.then(
        () => made.destroy(),
        () => undefined,
      );
  }
}

function safeUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

function databaseOf(url: string): number {
  const path = safeUrl(url)?.pathname.slice(1);
  return path ? Number(path) || 0 : 0;
}
