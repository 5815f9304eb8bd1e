/**
 * @module The engine's one emitting function: every event goes to the user's `onEvent` hook and to its
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
  if (emit === publishEvent) return channelOf(type).hasSubscribers;
  return (
    (emit as Partial<StoreErrorsOnly>)[STORE_ERRORS_ONLY] !== true ||
    type === 'storeError' ||
    channelOf(type).hasSubscribers
  );
}

const STORE_ERRORS_ONLY = Symbol('oncely.storeErrorsOnly');
type StoreErrorsOnly = { readonly [STORE_ERRORS_ONLY]: true };

/**
 * An `onEvent` hook that hears only `storeError` events: an adapter that reports store failures to its logger
 * passes one when its user hooks nothing, so the events of every request are not built for it (a hook that wants
 * all of them makes the engine build each one).
 */
export function storeErrorsOnly(
  handler: (event: Extract<OncelyEvent, { type: 'storeError' }>) => void,
): EventHandler {
  const hook = (event: OncelyEvent) => {
    if (event.type === 'storeError') handler(event);
  };
  return Object.assign(hook, { [STORE_ERRORS_ONLY]: true as const });
}

/** The emitter of an engine. A throwing hook must never break a request, so its errors are swallowed here. */
export function emitter(handler: EventHandler | undefined): Emit {
  if (handler === undefined) return publishEvent;
  const emit: Emit = (event, scope) => {
    try {
      handler(event);
    } catch {
      // An observability hook that throws is a bug in the hook, not a reason to fail the request.
    }
    publishEvent(event, scope);
  };
  if ((handler as Partial<StoreErrorsOnly>)[STORE_ERRORS_ONLY] === true)
    Object.assign(emit, { [STORE_ERRORS_ONLY]: true as const });
  return emit;
}
