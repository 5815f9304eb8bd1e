/**
 * @module Where engine events become `node:diagnostics_channel` messages. Every check of `hasSubscribers` comes before a
 * message is built: with nobody subscribed, an event costs one getter read and no allocation.
 */
import type { Channel } from 'node:diagnostics_channel';
import {
  type ClaimMessage,
  channels,
  type FencedMessage,
  type KeyMessage,
  type RejectedMessage,
  type RejectionCode,
  type ReleasedMessage,
  type StoreUnavailableMessage,
  type TokenMessage,
} from './diagnostics.js';
import type { OncelyEvent, OncelyEventType } from './events.js';

type Message =
  | ClaimMessage
  | KeyMessage
  | RejectedMessage
  | TokenMessage
  | ReleasedMessage
  | FencedMessage
  | StoreUnavailableMessage;

/** The message builders, as methods of one object so a test can count their calls (none without subscribers). */
export const messages = {
  event(event: OncelyEvent, scope: string | undefined): Message {
    switch (event.type) {
      case 'acquired':
      case 'takeover':
        return { key: event.key, scope, token: event.token, attempt: event.attempt };
      case 'replayed':
        return { key: event.key, scope };
      case 'conflict':
        return messages.rejected('conflict', 409, event.key, scope, event.retryAfterMs);
      case 'mismatch':
        return messages.rejected('mismatch', 422, event.key, scope, undefined);
      case 'completed':
      case 'leaseLost':
        return { key: event.key, scope, token: event.token };
      case 'released':
        return { key: event.key, scope, token: event.token, reason: event.reason };
      case 'fenced':
        return { key: event.key, scope, token: event.token, operation: event.operation };
      case 'storeError':
        return { operation: event.operation, error: event.error };
    }
  },
  replayed(key: string, scope: string | undefined): KeyMessage {
    return { key, scope };
  },
  rejected(
    code: RejectionCode,
    status: number,
    key: string | undefined,
    scope: string | undefined,
    retryAfterMs: number | undefined,
  ): RejectedMessage {
    return { code, status, key, scope, retryAfterMs };
  },
};

/** The channel an event type is published on. */
export function channelOf(type: OncelyEventType): Channel {
  switch (type) {
    case 'acquired':
      return channels.acquired;
    case 'takeover':
      return channels.takeover;
    case 'replayed':
      return channels.replayed;
    case 'conflict':
    case 'mismatch':
      return channels.rejected;
    case 'completed':
      return channels.completed;
    case 'released':
      return channels.released;
    case 'leaseLost':
      return channels.leaseLost;
    case 'fenced':
      return channels.fenced;
    case 'storeError':
      return channels.storeUnavailable;
  }
}

/** Publishes an engine event on its channel, when that channel has a subscriber. */
export function publishEvent(event: OncelyEvent, scope: string | undefined): void {
  const target = channelOf(event.type);
  if (target.hasSubscribers) target.publish(messages.event(event, scope));
}

/** True when `oncely:rejected` has a subscriber: callers check it before working out a scope to report. */
export function rejectionsObserved(): boolean {
  return channels.rejected.hasSubscribers;
}

/** Publishes a refusal the HTTP layer made before the engine saw the request (a bad key, a bad body). */
export function publishRejected(
  code: RejectionCode,
  status: number,
  key: string | undefined,
  scope: string | undefined,
): void {
  if (channels.rejected.hasSubscribers)
    channels.rejected.publish(messages.rejected(code, status, key, scope, undefined));
}

/** True when `oncely:replayed` has a subscriber. */
export function replaysObserved(): boolean {
  return channels.replayed.hasSubscribers;
}

/** Publishes a replay answered without the engine (from the HTTP layer's local cache). */
export function publishReplayed(key: string, scope: string | undefined): void {
  if (channels.replayed.hasSubscribers) channels.replayed.publish(messages.replayed(key, scope));
}
