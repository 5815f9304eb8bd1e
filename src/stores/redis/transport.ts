/**
 * @module What the Redis store needs of a client, whichever the user has: run a script on its key's node, batch a
 * tick's script calls, the nodes to walk for the inspector and `stats`, a subscriber for `waitFor`, and where it
 * points for telemetry. One adapter per client family under `clients/` implements it; the store's logic stays once
 * above it. Clients are recognised by shape, never imported: they are optional peers.
 */
import type { StoreEndpoint } from '../../core/store.js';
import type { ScriptArg, ScriptName } from './scripts.js';

/** One script call: the script, its one key (the record's Redis key) and its arguments. */
export interface ScriptCall {
  readonly name: ScriptName;
  readonly key: string;
  readonly args: readonly ScriptArg[];
  /** Bulk replies as Buffers (the record's bytes); else strings or Buffers, whichever the client gives. */
  readonly bytes: boolean;
}

/** One command of a node batch: its words, keys already as the node stores them. */
export type NodeCommand = readonly (string | number)[];

/** One Redis node (a standalone server, or one master of a Cluster), for walks that visit every node. */
export interface RedisNode {
  /**
   * Sends the commands in one round trip and answers each one's reply in order: bulk strings as Buffers, integers
   * as numbers, arrays as arrays, and a command's error as an `Error` in its place (the others still answer).
   */
  send(commands: readonly NodeCommand[]): Promise<unknown[]>;
}

/** The pub/sub connection `waitFor` listens on. */
export interface SettleSubscriber {
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  /** Calls `listener` with the channel of every message, until `stop`. */
  listen(listener: (channel: string) => void): void;
  /** Stops listening; closes the connection when the store made it (never a caller's). */
  stop(): void;
}

export interface RedisTransport {
  /** The client family, for messages and tests: `ioredis` (and iovalkey), `node-redis`, `glide`. */
  readonly family: 'ioredis' | 'node-redis' | 'glide';
  /** The server as the client was configured, for telemetry. */
  readonly endpoint: StoreEndpoint;
  /** The client's own key prefix (ioredis `keyPrefix`), which SCAN replies carry and commands add back. */
  readonly keyPrefix: string;
  /**
   * Resolves when commands may be sent (undefined when they may go right now); rejects with
   * `StoreUnavailableError` when the client is known to be down, so no call waits in a driver queue to run late.
   */
  gate(operation: string): Promise<void> | undefined;
  /**
   * Sends the calls, batched per node where the client allows (one pipeline each), and answers one promise per
   * call in order: a call's failure (NOSCRIPT is retried inside) rejects its promise alone.
   */
  scripts(calls: readonly ScriptCall[]): Promise<unknown>[];
  /**
   * Where the transport batches on its own: sends one call now, and with `batched` makes every call sent until the
   * event loop's check phase leave in one socket write (NOSCRIPT is retried inside). Undefined: the store batches
   * a turn's calls and hands them to `scripts`.
   */
  readonly send: ((call: ScriptCall, batched: boolean) => Promise<unknown>) | undefined;
  /** The call and `WAIT replicas timeoutMs` in one round trip to the key's primary: [script reply, WAIT reply]. */
  scriptAndWait(call: ScriptCall, replicas: number, timeoutMs: number): Promise<[unknown, unknown]>;
  /** Every node that holds records: the one server, or each master of a Cluster. */
  nodes(): Promise<readonly RedisNode[]>;
  /**
   * The subscriber for `waitFor`: the caller's `subscriber` if given, else one the adapter makes from the client
   * (closed by `stop`), or undefined when the client cannot make one: waiters then poll.
   */
  subscriber(): SettleSubscriber | undefined;
}

/** Milliseconds since the epoch from a `TIME` reply (two bulk strings). */
export function timeOf(reply: unknown): number {
  const [seconds, micros] = Array.isArray(reply) ? reply : [];
  return Number(String(seconds)) * 1000 + Math.floor(Number(String(micros)) / 1000);
}
