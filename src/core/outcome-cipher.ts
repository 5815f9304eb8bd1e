/**
 * @module Encryption at rest, the format: a stored outcome sealed with AES-256-GCM into the body of an outcome
 * that shows nothing (status 0, no headers, identity, inline), which every store keeps as it keeps any other.
 *
 *   u8 0xC1 (magic) · u8 format version (1) · u8 id length · key id · 12-byte IV · ciphertext · 16-byte GCM tag
 *
 * The additional authenticated data is the clear header (magic to key id) followed by the record's storage key,
 * so a record copied under another key, or relabelled with another key id, fails to open. The IV is random per
 * record (never a counter: several processes seal under one key with no shared state).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { isClearMark } from './clear-marks.js';
import type { ResolvedEncryption } from './encryption-keys.js';
import { FORMAT_VERSION, KEY_ID, SEALED_MAGIC } from './encryption-keys.js';
import { RecordUnreadableError } from './errors.js';
import { outcomeFromBytes, outcomeToBytes } from './outcome-bytes.js';
import type { StoredOutcome } from './store.js';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const ALGORITHM = 'aes-256-gcm';

/** Seals `outcome`, to be stored under `storageKey` and nowhere else; oncely's own marks stay in clear. */
export function encryptOutcome(
  outcome: StoredOutcome,
  storageKey: string,
  encryption: ResolvedEncryption,
): StoredOutcome {
  if (isClearMark(outcome)) return outcome;
  const { header, secret } = encryption.sealing;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, secret, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(additionalData(header, storageKey));
  const plaintext = outcomeToBytes(outcome);
  const body = Buffer.concat([header, iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return { status: 0, headers: [], body, encoding: 'identity', storage: 'inline' };
}

/**
 * The outcome a record holds, opened with whichever listed key sealed it. Throws `RecordUnreadableError` for
 * anything it cannot vouch for; a record in clear passes only with `allowPlaintext`.
 */
export function decryptOutcome(
  stored: StoredOutcome,
  storageKey: string,
  encryption: ResolvedEncryption,
): StoredOutcome {
  if (!looksSealed(stored)) {
    if (encryption.allowPlaintext || isClearMark(stored)) return stored;
    throw new RecordUnreadableError(
      'plaintext',
      'the stored outcome is not encrypted, and encryption.allowPlaintext is off',
    );
  }
  const body = Buffer.from(stored.body.buffer, stored.body.byteOffset, stored.body.byteLength);
  if (body[1] !== FORMAT_VERSION)
    throw new RecordUnreadableError('malformed', `the sealed outcome has format version ${body[1]}, not 1`);
  const idEnd = 3 + body[2]!;
  if (body.length < idEnd + IV_BYTES + TAG_BYTES)
    throw new RecordUnreadableError('malformed', 'the sealed outcome is truncated');
  const keyId = body.toString('latin1', 3, idEnd);
  const key = encryption.opening.get(keyId);
  if (key === undefined)
    throw new RecordUnreadableError(
      'unknown-key',
      `the stored outcome was sealed with key id ${JSON.stringify(keyId)}, which is not in encryption.keys (removed before its records expired?)`,
      keyId,
    );
  const tagAt = body.length - TAG_BYTES;
  const decipher = createDecipheriv(ALGORITHM, key.secret, body.subarray(idEnd, idEnd + IV_BYTES), {
    authTagLength: TAG_BYTES,
  });
  decipher.setAAD(additionalData(body.subarray(0, idEnd), storageKey));
  decipher.setAuthTag(body.subarray(tagAt));
  let plaintext: Buffer;
  try {
    plaintext = Buffer.concat([decipher.update(body.subarray(idEnd + IV_BYTES, tagAt)), decipher.final()]);
  } catch (cause) {
    throw new RecordUnreadableError(
      'unauthentic',
      `the stored outcome does not authenticate under key id "${keyId}": altered, copied from another key, or the key's bytes changed`,
      keyId,
      { cause },
    );
  }
  const outcome = outcomeFromBytes(plaintext);
  if (outcome === undefined)
    throw new RecordUnreadableError('malformed', 'the sealed outcome opened but does not decode', keyId);
  return outcome;
}

/** What every sealed record shows in clear; an outcome in clear that looks like this has a body in 0xC1. */
function looksSealed(stored: StoredOutcome): boolean {
  return (
    stored.status === 0 &&
    stored.headers.length === 0 &&
    stored.encoding === 'identity' &&
    stored.storage === 'inline' &&
    stored.body.byteLength > 0 &&
    stored.body[0] === SEALED_MAGIC
  );
}

/**
 * The key id of a record that has the whole shape of a sealed one (magic, an id of the allowed characters, room for
 * IV and tag), for an engine without `encryption`: it refuses such a record instead of replaying ciphertext. The
 * shape is strict so that no result in clear is mistaken for one (a CBOR date also starts with 0xC1).
 */
export function sealedKeyId(stored: StoredOutcome): string | undefined {
  if (!looksSealed(stored)) return undefined;
  const body = stored.body;
  const idEnd = 3 + body[2]!;
  if (body[2]! === 0 || body.byteLength < idEnd + IV_BYTES + TAG_BYTES) return undefined;
  const id = Buffer.from(body.buffer, body.byteOffset + 3, body[2]!).toString('latin1');
  return KEY_ID.test(id) ? id : undefined;
}

function additionalData(header: Uint8Array, storageKey: string): Buffer {
  return Buffer.concat([header, Buffer.from(storageKey, 'utf8')]);
}
