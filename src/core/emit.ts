/**
 * The engine's one emitting function: every event goes to the user's `onEvent` hook and to its
 * `node:diagnostics_channel` channel from this same call, so the two never disagree.
 */
import { publishEvent } from './diagnostics-publish.js';
import type { EventHandler, OncelyEvent } from './events.js';

/** Reports an event; `scope` (a route, a function's name) goes to the diagnostics message, where known. */
export type Emit = (event: OncelyEvent, scope?: string) => void;

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
