import { describe, expect, it } from 'vitest';
import { replayableBody } from '../../src/client/body.js';
import { isBodyNotReplayableError } from '../../src/client/errors.js';
import { checkKey, keyHeaderValue, newKey } from '../../src/client/key.js';
import { isInvalidKeyError } from '../../src/core/errors.js';
import { validateKey } from '../../src/core/key.js';
import { parseKeyHeader } from '../../src/http/key-header.js';

const text = (bytes: Uint8Array | null) => new TextDecoder().decode(bytes ?? new Uint8Array(0));

describe('keys', () => {
  it('a new key is a UUIDv7, different every time, in time order', () => {
    const keys = Array.from({ length: 100 }, () => newKey());
    for (const key of keys)
      expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(keys).size).toBe(100);
    expect([...keys].sort()).toEqual(keys);
  });

  it.each(['plain-key', 'a,b', '"quoted"', ' padded ', 'back\\slash', 'x'.repeat(255)])(
    'the header value of %j reads back as the same key on the server',
    (key) => {
      expect(parseKeyHeader(keyHeaderValue(checkKey(key)))).toBe(key);
    },
  );

  it('sends the bare form where it reads back the same (what most servers expect)', () => {
    expect(keyHeaderValue('0190a3b2-7c1d-7e4f-8a9b-0c1d2e3f4a5b')).toBe(
      '0190a3b2-7c1d-7e4f-8a9b-0c1d2e3f4a5b',
    );
  });

  it.each([
    ['', 'empty'],
    ['x'.repeat(256), 'too-long'],
    ['tab\there', 'bad-characters'],
    ['é', 'bad-characters'],
    ['\x7f', 'bad-characters'],
  ])('refuses %j before anything is sent (%s)', (key, reason) => {
    const error = (() => {
      try {
        checkKey(key);
      } catch (caught) {
        return caught;
      }
    })();
    expect(isInvalidKeyError(error)).toBe(true);
    expect(error).toMatchObject({ reason });
  });

  it.each(['k', '~'.repeat(255), '', 'x'.repeat(256), 'tab\there', 'é', '\x7f', ' '])(
    'the client takes or refuses %j as the server does (one set of rules, src/core/key-rules.ts)',
    (key) => {
      const outcome = (check: (key: string) => string) => {
        try {
          return { accepted: check(key) };
        } catch (caught) {
          return { refused: (caught as { reason?: unknown }).reason };
        }
      };
      expect(outcome(checkKey)).toEqual(outcome(validateKey));
    },
  );
});

describe('bodies are made replayable once', () => {
  it('none', async () => {
    expect(await replayableBody(undefined, 10)).toEqual({ bytes: null, contentType: null });
    expect(await replayableBody(null, 10)).toEqual({ bytes: null, contentType: null });
  });

  it('a string, with the media type fetch would give it', async () => {
    const body = await replayableBody('{"amount":1}', 10);
    expect(text(body.bytes)).toBe('{"amount":1}');
    expect(body.contentType).toBe('text/plain;charset=UTF-8');
  });

  it('FormData: one multipart boundary for every attempt (fetch draws a new one each time)', async () => {
    const form = new FormData();
    form.set('amount', '1999');
    const body = await replayableBody(form, 10);
    const boundary = /boundary=(\S+)/.exec(body.contentType ?? '')?.[1];
    expect(boundary).toBeDefined();
    expect(text(body.bytes)).toContain(`--${boundary}`);
    // What the guard is for: serializing the same FormData twice gives different bytes.
    const again = await replayableBody(form, 10);
    expect(text(again.bytes)).not.toBe(text(body.bytes));
  });

  it('URLSearchParams and typed arrays are copied: a change after the call does not reach a retry', async () => {
    const params = new URLSearchParams({ amount: '1' });
    const array = new Uint8Array([1, 2, 3]);
    const [fromParams, fromArray] = await Promise.all([
      replayableBody(params, 10),
      replayableBody(array, 10),
    ]);
    params.set('amount', '2');
    array[0] = 9;
    expect(text(fromParams.bytes)).toBe('amount=1');
    expect(fromParams.contentType).toBe('application/x-www-form-urlencoded;charset=UTF-8');
    expect([...(fromArray.bytes ?? [])]).toEqual([1, 2, 3]);
  });

  it('each kind gets the bytes and the media type fetch itself would send', async () => {
    const form = new FormData();
    form.set('a', '1');
    const kinds: BodyInit[] = [
      'héllo',
      new URLSearchParams({ a: '1 2', b: 'é' }),
      new TextEncoder().encode('bytes').buffer,
      new Uint16Array([1, 2, 3]).subarray(1),
      new DataView(new Uint8Array([7, 8, 9]).buffer, 1, 1),
      new Blob(['blob'], { type: 'text/csv' }),
      new Blob(['untyped']),
    ];
    for (const kind of kinds) {
      const fetched = new Request('http://x/', { method: 'POST', body: kind });
      const expected = new Uint8Array(await fetched.arrayBuffer());
      const body = await replayableBody(kind, 10);
      expect(body.contentType, String(kind)).toBe(fetched.headers.get('content-type'));
      expect([...(body.bytes ?? [])], String(kind)).toEqual([...expected]);
    }
  });

  it('a stream is read into memory once, up to maxStreamBytes', async () => {
    const stream = () =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('12345'));
          controller.enqueue(new TextEncoder().encode('67890'));
          controller.close();
        },
      });
    expect(text((await replayableBody(stream(), 10)).bytes)).toBe('1234567890');
    const refused = await replayableBody(stream(), 9).catch((error: unknown) => error);
    expect(isBodyNotReplayableError(refused)).toBe(true);
    expect(refused).toMatchObject({ reason: 'too-large', code: 'ONCELY_BODY_NOT_REPLAYABLE' });
  });

  it('a stream read or locked before the call is refused with a clear error', async () => {
    const stream = new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
    stream.getReader();
    const refused = await replayableBody(stream, 10).catch((error: unknown) => error);
    expect(isBodyNotReplayableError(refused)).toBe(true);
    expect(refused).toMatchObject({ reason: 'used' });
  });
});
