/**
 * @module Codecs for results that are not HTTP responses (`idempotent()`, the inbox, message handlers): values to bytes
 * and back, the default keeping Date, Map, Set, BigInt and typed arrays.
 */
import { parse, stringify } from 'devalue';
import { CorruptRecordError, InvalidOptionsError } from './errors.js';

/** Turns a function's result into bytes for the store and back. */
export interface Codec {
  readonly name: string;
  encode(value: unknown): Uint8Array;
  decode(bytes: Uint8Array): unknown;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The default codec: structured values (Date, Map, Set, BigInt, RegExp, typed arrays, undefined, NaN, repeated
 * and cyclic references) as text, through `devalue`. Chosen over `node:v8` serialization because its format does
 * not change with the Node version, so a fleet in a rolling upgrade still replays what another version stored.
 */
export const structuredCodec: Codec = {
  name: 'structured',
  encode(value) {
    try {
      return encoder.encode(stringify(value));
    } catch (cause) {
      throw new InvalidOptionsError(
        `the result cannot be stored by the structured codec (${(cause as Error).message}); return plain data or pass a codec`,
      );
    }
  },
  decode(bytes) {
    try {
      return parse(decoder.decode(bytes));
    } catch (cause) {
      throw new CorruptRecordError('a stored result could not be decoded by the structured codec', { cause });
    }
  },
};

/** Plain JSON, for results that other languages read from the store too. */
export const jsonCodec: Codec = {
  name: 'json',
  encode(value) {
    return encoder.encode(JSON.stringify(value) ?? 'null');
  },
  decode(bytes) {
    try {
      return JSON.parse(decoder.decode(bytes));
    } catch (cause) {
      throw new CorruptRecordError('a stored result is not valid JSON', { cause });
    }
  },
};
