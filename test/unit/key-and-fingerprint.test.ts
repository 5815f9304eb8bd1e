import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidKeyError } from '../../src/index.js';
import { canonicalJson, fingerprintOf, scopedKey, validateKey } from '../../src/store.js';

describe('keys', () => {
  it('accepts 1 to 255 printable ASCII characters and rejects everything else with a reason', () => {
    expect(validateKey('a')).toBe('a');
    expect(validateKey('~'.repeat(255))).toHaveLength(255);
    const reason = (key: unknown) => {
      try {
        validateKey(key);
        return 'ok';
      } catch (error) {
        return error instanceof InvalidKeyError ? error.reason : 'untyped';
      }
    };
    expect(reason(undefined)).toBe('missing');
    expect(reason('')).toBe('empty');
    expect(reason('x'.repeat(256))).toBe('too-long');
    expect(reason('a\nb')).toBe('bad-characters');
    expect(reason('ключ')).toBe('bad-characters');
    // The edges of printable ASCII: space and tilde are in, the control characters either side are out.
    expect(reason(' ')).toBe('ok');
    expect(reason('~')).toBe('ok');
    expect(reason('\x1f')).toBe('bad-characters');
    expect(reason('\x7f')).toBe('bad-characters');
    expect(reason(42)).toBe('bad-characters');
  });

  it('never crashes on arbitrary input: a valid key or an InvalidKeyError', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.anything()), (value) => {
        try {
          expect(typeof validateKey(value)).toBe('string');
        } catch (error) {
          expect(error).toBeInstanceOf(InvalidKeyError);
        }
      }),
    );
  });

  it('scoped keys are fixed-size and disjoint across scopes', () => {
    expect(scopedKey('a', 'b')).toHaveLength(43);
    expect(scopedKey('a', 'bc')).not.toBe(scopedKey('ab', 'c'));
    expect(scopedKey('POST /pay', 'k')).not.toBe(scopedKey('POST /refund', 'k'));
  });
});

describe('fingerprints', () => {
  it('frames parts so that concatenation cannot collide', () => {
    expect(fingerprintOf(['ab', 'c'])).not.toBe(fingerprintOf(['a', 'bc']));
    expect(fingerprintOf([Buffer.from('x')])).toBe(fingerprintOf(['x']));
  });

  it('canonical JSON ignores key order and whitespace at every depth', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const reordered = JSON.parse(JSON.stringify(value), (_key, v) =>
          v && typeof v === 'object' && !Array.isArray(v)
            ? Object.fromEntries(Object.entries(v).reverse())
            : v,
        );
        expect(canonicalJson(reordered)).toBe(canonicalJson(value));
      }),
    );
    expect(canonicalJson({ b: [2, { d: 1, c: 0 }], a: 1n })).toBe('{"a":"1","b":[2,{"c":0,"d":1}]}');
  });
});
