/**
 * @module The headers a response stores, in one pass over its own (`storedHeaders`): what the handler produced
 * (`handlerHeaders`) and of that what may be stored (`storableHeaders`), without copying a response whose headers are
 * all kept as they are.
 */
import { describe, expect, it } from 'vitest';
import type { HeaderPairs } from '../../src/core/store.js';
import {
  handlerHeaders,
  snapshotHeaders,
  storableHeaders,
  storedHeaders,
} from '../../src/http/outcome-policy.js';

const none = new Set<string>();

describe('storedHeaders', () => {
  it('is storableHeaders of handlerHeaders', () => {
    const before = snapshotHeaders([
      ['x-powered-by', 'Express'],
      ['X-Request-Id', 'r1'],
      ['vary', 'Origin'],
    ]);
    const cases: HeaderPairs[] = [
      [
        ['x-powered-by', 'Express'],
        ['x-request-id', 'r1'],
        ['content-type', 'application/json'],
        ['content-length', '12'],
        ['ETag', 'W/"c"'],
      ],
      [
        ['vary', 'Origin'],
        ['vary', 'Accept'],
        ['set-cookie', 'a=1'],
        ['date', 'Mon'],
        ['transfer-encoding', 'chunked'],
      ],
      [['x-request-id', 'r2']],
      [],
    ];
    for (const headers of cases) {
      for (const keep of [none, new Set(['date'])]) {
        expect(storedHeaders(headers, before, keep)).toEqual(
          storableHeaders(handlerHeaders(headers, before), keep),
        );
        expect(storedHeaders(headers, undefined, keep)).toEqual(storableHeaders(headers, keep));
      }
    }
  });

  it('copies nothing when every header is kept as it is', () => {
    const headers: HeaderPairs = [
      ['content-type', 'application/json'],
      ['etag', 'W/"c"'],
    ];
    expect(storedHeaders(headers, undefined, none)).toBe(headers);
    expect(storedHeaders(headers, snapshotHeaders([['x-powered-by', 'Express']]), none)).toBe(headers);
    // One left out, one renamed: a new array, the kept pairs themselves in it.
    const mixed: HeaderPairs = [headers[0]!, ['Content-Length', '2'], ['X-Id', '7']];
    const stored = storedHeaders(mixed, undefined, none);
    expect(stored).toEqual([
      ['content-type', 'application/json'],
      ['x-id', '7'],
    ]);
    expect(stored[0]).toBe(headers[0]);
  });
});
