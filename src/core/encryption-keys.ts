/**
 * @module Encryption at rest, the option: the key list a user gives, checked once at construction and turned into
 * what sealing needs (a key object per id, the header every record sealed under it starts with).
 */
import { createSecretKey, type KeyObject } from 'node:crypto';
import { InvalidOptionsError } from './errors.js';
import { knownOptions } from './validate.js';

/** One AES-256 key and the id that names it inside every record it seals. */
export interface EncryptionKey {
  /**
   * Stored in clear in each record this key seals, so the right key opens it after a rotation: 1-64 characters of
   * `A-Z a-z 0-9 . _ -` (a date such as `2026-05` reads well). Never reuse an id for other key material.
   */
  readonly id: string;
  /** 32 random bytes (`randomBytes(32)`), as a `Buffer`/`Uint8Array` or as base64 (44 characters). */
  readonly key: Uint8Array | string;
}

/** `encryption` engine option: every stored outcome sealed with AES-256-GCM (docs/encryption.md). */
export interface EncryptionOptions {
  /**
   * Newest first: `keys[0]` seals every record written from now on; every key in the list opens the records it
   * sealed. Rotate by putting the new key first, and drop an old key only once the longest retention has passed.
   */
  readonly keys: readonly EncryptionKey[];
  /**
   * Accept records stored in clear, for the migration window after encryption is turned on over a live store
   * (until the longest retention has passed). Such records are read without any integrity check. Default false:
   * a record in clear is refused with `RecordUnreadableError`.
   */
  readonly allowPlaintext?: boolean;
}

/** One key ready for use: its AES key object and the bytes its records start with. */
export interface SealingKey {
  readonly id: string;
  readonly secret: KeyObject;
  /** Magic byte, format version, id length, id: the record's clear header (and the start of its AAD). */
  readonly header: Buffer;
}

export interface ResolvedEncryption {
  readonly sealing: SealingKey;
  readonly opening: ReadonlyMap<string, SealingKey>;
  readonly allowPlaintext: boolean;
}

/** 0xC1 can never start UTF-8 text, so no JSON or text body in clear begins like a sealed record. */
export const SEALED_MAGIC = 0xc1;
export const FORMAT_VERSION = 1;
const KEY_BYTES = 32;
export const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
// Canonical base64 of 32 bytes: 43 characters and one '=' (the last character holds 4 bits, so only some fit).
const BASE64_KEY = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

/** Checks the option and prepares the keys; `InvalidOptionsError` (never showing key material) when it is wrong. */
export function resolveEncryption(options: EncryptionOptions): ResolvedEncryption {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionsError('encryption must be an object ({ keys: [{ id, key }] })');
  knownOptions('encryption', options, ['keys', 'allowPlaintext']);
  const { keys, allowPlaintext = false } = options;
  if (!Array.isArray(keys) || keys.length === 0)
    throw new InvalidOptionsError('encryption.keys must list at least one key ({ id, key }), newest first');
  if (typeof allowPlaintext !== 'boolean')
    throw new InvalidOptionsError('encryption.allowPlaintext must be a boolean');
  const opening = new Map<string, SealingKey>();
  keys.forEach((entry: unknown, index) => {
    const key = sealingKey(entry, `encryption.keys[${index}]`);
    if (opening.has(key.id))
      throw new InvalidOptionsError(`encryption.keys[${index}]: the id "${key.id}" is listed twice`);
    opening.set(key.id, key);
  });
  return { sealing: opening.get((keys[0] as EncryptionKey).id)!, opening, allowPlaintext };
}

function sealingKey(entry: unknown, where: string): SealingKey {
  if (entry === null || typeof entry !== 'object')
    throw new InvalidOptionsError(`${where} must be an object { id, key }`);
  knownOptions(where, entry, ['id', 'key']);
  const { id, key } = entry as Partial<EncryptionKey>;
  if (typeof id !== 'string' || !KEY_ID.test(id))
    throw new InvalidOptionsError(`${where}.id must be 1-64 characters of A-Z a-z 0-9 . _ -`);
  const bytes = keyBytes(key, `${where} (id "${id}")`);
  const idBytes = Buffer.from(id, 'ascii');
  const header = Buffer.concat([Buffer.from([SEALED_MAGIC, FORMAT_VERSION, idBytes.length]), idBytes]);
  // createSecretKey copies the bytes: a caller that later zeroes or reuses its buffer changes nothing here.
  return { id, secret: createSecretKey(bytes), header };
}

function keyBytes(key: unknown, where: string): Uint8Array {
  if (typeof key === 'string') {
    if (!BASE64_KEY.test(key))
      throw new InvalidOptionsError(
        `${where}: the key must be 32 bytes (AES-256), given as a Buffer or as base64 of 44 characters (randomBytes(32).toString('base64'))`,
      );
    return Buffer.from(key, 'base64');
  }
  if (key instanceof Uint8Array) {
    if (key.byteLength !== KEY_BYTES)
      throw new InvalidOptionsError(
        `${where}: the key must be 32 bytes (AES-256), got ${key.byteLength} bytes`,
      );
    return key;
  }
  throw new InvalidOptionsError(`${where}: the key must be a Buffer, a Uint8Array or a base64 string`);
}
