/**
 * @module An app instance's options from the wire: functions rebuilt from their source, a logger whose lines go
 * back to the test (awaited before the response leaves, so a case that reads its logger after a request finds them).
 */
import type { FetchIdempotencyOptions } from 'oncely/fetch';
import { callBack } from './callbacks';
import type { WireValue } from './wire';

export function decodeOptions(
  app: string,
  wire: { readonly [name: string]: WireValue },
  pending: Set<Promise<unknown>>,
): Omit<FetchIdempotencyOptions, 'store'> {
  const decode = (value: WireValue): unknown => {
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map(decode);
    if ('$function' in value && typeof value.$function === 'string')
      // The test's own function, as its source: the suite's are self-contained (no closures to carry over).
      return new Function(`return (${value.$function});`)();
    if ('$logger' in value) {
      return {
        warn(message: string) {
          const sent = callBack('/warn', { app, message });
          pending.add(sent);
          void sent.finally(() => pending.delete(sent));
        },
      };
    }
    return Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, decode(inner)]));
  };
  return decode(wire) as Omit<FetchIdempotencyOptions, 'store'>;
}
