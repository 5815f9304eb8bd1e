/**
 * @module Lifecycle events on `node:diagnostics_channel`: the names and message shapes an APM agent or a log shipper
 * subscribes to without passing anything to oncely. Messages carry the hashed storage key, never the client's raw
 * key, a body or a stored response. `docs/diagnostics.md` has the table.
 */
import { channel } from 'node:diagnostics_channel';
import type { FencedOperation, ReleaseReason } from './events.js';

/** The channel names, stable across releases: subscribe with `diagnostics_channel.subscribe(name, fn)`. */
export const DIAGNOSTICS_CHANNELS = {
  /** A first claim on a key: the handler runs. */
  acquired: 'oncely:acquired',
  /** A claim on a key whose previous owner's lease ran out (it crashed or stalled): the handler runs again. */
  takeover: 'oncely:takeover',
  /** A completed key answered with its stored outcome. */
  replayed: 'oncely:replayed',
  /** A request refused without running: a duplicate in flight, a key reused, a bad key or body. */
  rejected: 'oncely:rejected',
  /** A claim's outcome stored. */
  completed: 'oncely:completed',
  /** A claim let its key go (the code threw, its result was not to be kept, …). */
  released: 'oncely:released',
  /** A running claim's lease ran out or was taken: its code may run a second time elsewhere. */
  leaseLost: 'oncely:lease-lost',
  /** A stalled owner came back and the store refused its token. */
  fenced: 'oncely:fenced',
  /** A store call failed or timed out (the request fails closed, 503 over HTTP). */
  storeUnavailable: 'oncely:store-unavailable',
} as const;

export type DiagnosticsChannelName = (typeof DIAGNOSTICS_CHANNELS)[keyof typeof DIAGNOSTICS_CHANNELS];

/**
 * Why a request was refused, and the status it answers over HTTP: `conflict` 409 (a duplicate in flight; 202 on a
 * long-running route), `mismatch` 422 (the key was used for another request), `key-missing` and `key-malformed`
 * 400, `body-unparseable` 400, `body-too-large` 413.
 */
export type RejectionCode =
  | 'conflict'
  | 'mismatch'
  | 'key-missing'
  | 'key-malformed'
  | 'body-unparseable'
  | 'body-too-large';

/** What every message about one key says. `scope`: the route (`POST /orders/:id`) or `fn:<name>`, when known. */
export interface KeyMessage {
  /** The hashed storage key (the same as `onEvent`'s and the CLI's), never the client's key. */
  readonly key: string;
  readonly scope: string | undefined;
}

/** `oncely:acquired` and `oncely:takeover`. */
export interface ClaimMessage extends KeyMessage {
  readonly token: number;
  /** 1 for a first claim; more for a takeover. */
  readonly attempt: number;
}

/** `oncely:replayed`. */
export type ReplayedMessage = KeyMessage;

/** `oncely:rejected`. `key` is undefined when the request was refused before it had one (a bad key header). */
export interface RejectedMessage {
  readonly code: RejectionCode;
  readonly status: number;
  readonly key: string | undefined;
  readonly scope: string | undefined;
  /** `conflict` only: how long the holder's lease has left. */
  readonly retryAfterMs: number | undefined;
}

/** `oncely:completed` and `oncely:lease-lost`. */
export interface TokenMessage extends KeyMessage {
  readonly token: number;
}

/** `oncely:released`. */
export interface ReleasedMessage extends TokenMessage {
  readonly reason: ReleaseReason;
}

/** `oncely:fenced`. */
export interface FencedMessage extends TokenMessage {
  readonly operation: FencedOperation;
}

/** `oncely:store-unavailable`. `error` is a `StoreUnavailableError` whose `cause` is the driver's error. */
export interface StoreUnavailableMessage {
  readonly operation: string;
  readonly error: unknown;
}

/** The message type of each channel, for typed subscribers. */
export interface DiagnosticsMessages {
  'oncely:acquired': ClaimMessage;
  'oncely:takeover': ClaimMessage;
  'oncely:replayed': ReplayedMessage;
  'oncely:rejected': RejectedMessage;
  'oncely:completed': TokenMessage;
  'oncely:released': ReleasedMessage;
  'oncely:lease-lost': TokenMessage;
  'oncely:fenced': FencedMessage;
  'oncely:store-unavailable': StoreUnavailableMessage;
}

// Held here for the life of the process: Node before 22 drops a channel object nobody references, and with it
// the subscribers a `channel(name).subscribe()` attached.
export const channels = {
  acquired: channel(DIAGNOSTICS_CHANNELS.acquired),
  takeover: channel(DIAGNOSTICS_CHANNELS.takeover),
  replayed: channel(DIAGNOSTICS_CHANNELS.replayed),
  rejected: channel(DIAGNOSTICS_CHANNELS.rejected),
  completed: channel(DIAGNOSTICS_CHANNELS.completed),
  released: channel(DIAGNOSTICS_CHANNELS.released),
  leaseLost: channel(DIAGNOSTICS_CHANNELS.leaseLost),
  fenced: channel(DIAGNOSTICS_CHANNELS.fenced),
  storeUnavailable: channel(DIAGNOSTICS_CHANNELS.storeUnavailable),
};
