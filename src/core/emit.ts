/**
 * The engine's one emitting function: every event goes to the user's `onEvent` hook and to its
 * `node:diagnostics_channel` channel from this same call, so the two never disagree.
 */
import { channelOf, publishEvent } from './diagnostics-publish.js';
import type { EventHandler, OncelyEvent, OncelyEventType } from './events.js';

/** Reports an event; `scope` (a route, a function's name) goes to the diagnostics message, where known. */
export type Emit = (event: OncelyEvent, scope?: string) => void;

/**
 * Whether an event of `type` has anyone to go to: asked before the event object is built on the paths every
 * request takes. Without a hook or a probe `emit` is `publishEvent` itself, and then only a subscriber of the
 * event's channel wants it; V8 cannot drop an object that a call into the channel code may see.
 */
export function wanted(emit: Emit, type: OncelyEventType): boolean {
  return emit !== publishEvent || channelOf(type).hasSubscribers;
}

/** The emitter of an engine. A throwing hook must never break a request, so its errors are swallowed here. */
export function emitter(handler: EventHandler | undefined): Emit {
  if (handler === undefined) return publishEvent;
  return (event, scope) => {
    try {
      handler(event);
    } catch {
      // An observability hook that throws is a bug in the hook, not a reason to fail the request.
    }
    publishEvent(event, scope);
  };
}
