/**
 * @module The transport on ioredis (and iovalkey, its fork, which keeps its API). On a standalone server (Sentinel
 * included) each call is one EVALSHA sent at once (EVAL after NOSCRIPT), the socket corked until the turn of the
 * event loop ends so a turn's calls leave in one write; on a Cluster the scripts are registered with `defineCommand`
 * and a turn's calls go as one `pipeline()` per node. A `duplicate()` for pub/sub.
 */
import type { Cluster, Redis } from 'ioredis';
import { ConnectionGate } from '../connection.js';
import { redisEndpoint } from '../endpoint.js';
import { isCluster, type RedisClient, registerScripts, runScript, scriptSource } from '../scripts.js';
import type { NodeCommand, RedisNode, RedisTransport, ScriptCall, SettleSubscriber } from '../transport.js';
import { evalshaWords, evalWords, isNoScript, shaOf, type Words } from './evalsha.js';
import { slotOf } from './slot.js';

type Pipeline = ReturnType<RedisClient['pipeline']>;

/**
 * A client with ioredis' API, by shape: iovalkey's `Redis` and `Cluster` (a fork whose types are its own, not
 * ioredis'), or any other fork that kept `defineCommand`, `pipeline` and `status`.
 */
export interface IoredisApiClient {
  readonly status: string;
  defineCommand(...args: never[]): unknown;
  pipeline(...args: never[]): unknown;
}

/** An ioredis or iovalkey `Redis` or `Cluster`, by shape (the fork passes the same checks). */
export function isIoredisShaped(value: object): value is RedisClient {
  const client = value as Partial<RedisClient> & { status?: unknown };
  return (
    typeof client.defineCommand === 'function' &&
    typeof client.pipeline === 'function' &&
    typeof client.status === 'string'
  );
}

/** What the standalone path uses of a `Redis`: the generic commands, and the socket it writes to. */
type Sender = Pick<Redis, 'call' | 'callBuffer'> & { readonly stream?: Corkable | undefined };
interface Corkable {
  cork(): void;
  uncork(): void;
}

// Taken when the module loads, so a test's fake timers (which replace the global) never hold the store's calls.
const nextTurn = globalThis.setImmediate;

export class IoredisTransport implements RedisTransport {
  readonly family = 'ioredis';
  readonly send: ((call: ScriptCall, batched: boolean) => Promise<unknown>) | undefined;
  readonly #client: RedisClient;
  readonly #subscriber: RedisClient | undefined;
  readonly #gate: ConnectionGate;
  /** The socket corked for this turn's calls, until `#uncork` runs in the check phase. */
  #corked: Corkable | undefined;

  constructor(client: RedisClient, subscriber: RedisClient | undefined, connectWaitMs: number) {
    this.#client = client;
    this.#subscriber = subscriber;
    this.#gate = new ConnectionGate(client, connectWaitMs);
    if (isCluster(client)) {
      registerScripts(client);
      this.send = undefined;
    } else this.send = (call, batched) => this.#send(call, batched);
  }

  get endpoint() {
    return redisEndpoint(this.#client);
  }

  get keyPrefix(): string {
    return this.#client.options.keyPrefix ?? '';
  }

  gate(operation: string): Promise<void> | undefined {
    return this.#gate.check(operation);
  }

  scripts(calls: readonly ScriptCall[]): Promise<unknown>[] {
    if (!isCluster(this.#client)) return calls.map((call) => this.#send(call, true));
    // One call alone goes as it is: a pipeline would only add its bookkeeping.
    if (calls.length === 1) return [this.#one(calls[0]!)];
    const replies: Promise<unknown>[] = new Array(calls.length);
    for (const group of this.#byNode(calls)) {
      const pipeline = this.#client.pipeline();
      for (const i of group) {
        const { name, key, args, bytes } = calls[i]!;
        runScript(pipeline, name, key, args, bytes);
      }
      const done = pipeline.exec();
      group.forEach((i, j) => {
        replies[i] = done.then((results) => settled(results?.[j]));
      });
    }
    return replies;
  }

  /**
   * Raw EVALSHA, not the registered command: ioredis resends a NOSCRIPT'd script on its own, after the WAIT of the
   * same pipeline has already answered for the writes before it. Here a NOSCRIPT sends EVAL and WAIT again.
   */
  async scriptAndWait(call: ScriptCall, replicas: number, timeoutMs: number): Promise<[unknown, unknown]> {
    const send = async (words: Words): Promise<[unknown, unknown]> => {
      const pipeline = this.#client.pipeline();
      // By the lower-case name ioredis (and iovalkey) knows the keys of: a Cluster routes by them, keyPrefix adds to them.
      pipeline.call(String(words[0]).toLowerCase(), ...words.slice(1));
      pipeline.wait(replicas, timeoutMs);
      const results = (await pipeline.exec()) ?? [];
      return [settled(results[0]), settled(results[1])];
    };
    try {
      return await send(evalshaWords(call));
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return send(evalWords(call));
    }
  }

  async nodes(): Promise<readonly RedisNode[]> {
    const client = this.#client;
    const nodes: Redis[] = isCluster(client) ? client.nodes('master') : [client];
    return nodes.map((node) => new IoredisNode(node));
  }

  subscriber(): SettleSubscriber {
    if (this.#subscriber !== undefined) return new IoredisSubscriber(this.#subscriber, false);
    // Pub/sub needs a connection of its own; this one is the store's, so the store may choose its options: an
    // offline queue lets a SUBSCRIBE sent while it connects go out once it is up (waiters poll meanwhile).
    const client = this.#client;
    const made: RedisClient = isCluster(client)
      ? client.duplicate(undefined, { enableOfflineQueue: true })
      : client.duplicate({ enableOfflineQueue: true, lazyConnect: false });
    made.on('error', () => {
      // Reconnects are automatic and waiters poll meanwhile; an unhandled 'error' event would only add noise.
    });
    return new IoredisSubscriber(made, true);
  }

  /**
   * One call as EVALSHA through the client's generic `call`, not a registered command: ioredis' script commands make
   * a command class, a rejection handler and a copy of the arguments per call (about a kilobyte of heap each, by
   * bench/http/heap-sites.ts). Batched, the socket is corked until the check phase, so the calls of every request
   * whose data arrived in one poll leave in one write, as a pipeline's would, without a pipeline per turn.
   */
  #send(call: ScriptCall, batched: boolean): Promise<unknown> {
    const client = this.#client as unknown as Sender;
    if (batched && this.#corked === undefined) {
      const stream = client.stream;
      if (stream !== undefined) {
        stream.cork();
        this.#corked = stream;
        nextTurn(this.#uncork);
      }
    }
    const { name, key, args, bytes } = call;
    const sent = bytes
      ? client.callBuffer('evalsha', shaOf(name), 1, key, ...(args as Array<string | number | Buffer>))
      : client.call('evalsha', shaOf(name), 1, key, ...(args as Array<string | number | Buffer>));
    return sent.catch((error: unknown) => {
      if (!isNoScript(error)) throw error;
      // A server without the script (a restart, a failover, SCRIPT FLUSH): EVAL runs it and loads it.
      const source = scriptSource(name);
      return bytes
        ? client.callBuffer('eval', source, 1, key, ...(args as Array<string | number | Buffer>))
        : client.call('eval', source, 1, key, ...(args as Array<string | number | Buffer>));
    });
  }

  readonly #uncork = (): void => {
    const stream = this.#corked;
    this.#corked = undefined;
    stream?.uncork();
  };

  #one(call: ScriptCall): Promise<unknown> {
    try {
      return runScript(this.#client, call.name, call.key, call.args, call.bytes);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Indexes of the calls grouped by the master that owns their key (a standalone server: one group). */
  #byNode(calls: readonly ScriptCall[]): number[][] {
    const client = this.#client;
    if (!isCluster(client)) return [calls.map((_, i) => i)];
    const groups = new Map<string, number[]>();
    const prefix = client.options.keyPrefix ?? '';
    calls.forEach((call, i) => {
      // A slot the client has not mapped yet gets a pipeline of its own; ioredis routes (or redirects) it.
      const node =
        (client as Cluster & { slots: string[][] }).slots[slotOf(prefix + call.key)]?.[0] ?? `#${i}`;
      const group = groups.get(node);
      if (group === undefined) groups.set(node, [i]);
      else group.push(i);
    });
    return [...groups.values()];
  }
}

/** A pipeline's `[error, reply]` as the reply, or its error thrown. */
function settled(result: [Error | null, unknown] | undefined): unknown {
  if (result === undefined) throw new Error('redis pipeline: no reply');
  const [error, reply] = result;
  if (error) throw error;
  return reply;
}

class IoredisNode implements RedisNode {
  readonly #node: Redis;

  constructor(node: Redis) {
    this.#node = node;
  }

  async send(commands: readonly NodeCommand[]): Promise<unknown[]> {
    const pipeline: Pipeline = this.#node.pipeline();
    // Lower-case names: iovalkey finds a command's keys (to add keyPrefix) only by them.
    for (const [name, ...args] of commands) pipeline.callBuffer(String(name).toLowerCase(), ...args);
    const results = (await pipeline.exec()) ?? [];
    return commands.map((_, i) => {
      const [error, reply] = results[i] ?? [new Error('redis pipeline: no reply'), undefined];
      return error ?? reply;
    });
  }
}

class IoredisSubscriber implements SettleSubscriber {
  readonly #connection: RedisClient;
  readonly #owned: boolean;
  #listener: ((channel: string) => void) | undefined;

  constructor(connection: RedisClient, owned: boolean) {
    this.#connection = connection;
    this.#owned = owned;
  }

  subscribe(channel: string): Promise<unknown> {
    return this.#connection.subscribe(channel);
  }

  unsubscribe(channel: string): Promise<unknown> {
    return this.#connection.unsubscribe(channel);
  }

  listen(listener: (channel: string) => void): void {
    this.#listener = listener;
    this.#connection.on('message', listener);
  }

  stop(): void {
    if (this.#listener !== undefined) this.#connection.removeListener('message', this.#listener);
    if (this.#owned) this.#connection.disconnect();
  }
}
