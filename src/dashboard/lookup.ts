import { scopedKey, validateKey } from '../core/key.js';
import { defaultEnvelopeOptions, openOutcome } from '../core/record.js';
import type { KeyRecord } from '../core/store.js';
import type { KeyBody, KeyDetail } from './model.js';
import type { ResolvedSource } from './source.js';

/** The body shown for one key is cut here: enough to recognise it, bounded for the page. */
export const BODY_PREVIEW_BYTES = 16_384;

/** A storage key as the stores make them: base64url SHA-256 (43 characters). */
const STORAGE_KEY = /^[A-Za-z0-9_-]{43}$/;

/** Which record a request names: `hashed` (the storage key) or `scope` + `key`, as `oncely inspect` takes them. */
export function storageKeyOf(query: URLSearchParams): string | { error: string } {
  const hashed = query.get('hashed');
  if (hashed !== null && hashed !== '') {
    return STORAGE_KEY.test(hashed)
      ? hashed
      : { error: 'hashed must be a storage key (43 base64url characters)' };
  }
  const scope = query.get('scope');
  const key = query.get('key');
  if (scope === null || key === null) return { error: 'give scope and key, or hashed' };
  try {
    return scopedKey(scope, validateKey(key));
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** A record with its outcome's status and headers; the body only as a byte count. */
export async function lookUp(source: ResolvedSource, key: string): Promise<KeyDetail> {
  const record = await source.store.get(key);
  if (record === undefined) return { found: false, key, record: null, outcome: null };
  const { outcome } = record;
  return {
    found: true,
    key,
    record: detailRow(record),
    outcome:
      outcome === undefined
        ? null
        : {
            status: outcome.status,
            headers: outcome.headers.map(([name, value]) => [name, value] as const),
            encoding: outcome.encoding,
            storage: outcome.storage,
            bodyBytes: outcome.body.byteLength,
          },
  };
}

/** The body of one completed record, decompressed, its first `BODY_PREVIEW_BYTES` as UTF-8 text. */
export async function bodyOf(source: ResolvedSource, key: string): Promise<KeyBody | undefined> {
  const record = await source.store.get(key);
  if (record?.outcome === undefined) return undefined;
  const opened = await openOutcome(record.outcome, defaultEnvelopeOptions);
  if (!opened.retained) return { key, retained: false, bytes: 0, truncated: false, text: '' };
  const body = opened.outcome.body;
  return {
    key,
    retained: true,
    bytes: body.byteLength,
    truncated: body.byteLength > BODY_PREVIEW_BYTES,
    text: Buffer.from(body.subarray(0, BODY_PREVIEW_BYTES)).toString('utf8'),
  };
}

function detailRow(record: KeyRecord): NonNullable<KeyDetail['record']> {
  return {
    key: record.key,
    state: record.state,
    fingerprint: record.fingerprint,
    attempt: record.attempt,
    token: record.token,
    // The store's get has no clock reading to give back; the app server's is close enough for a lookup.
    leaseLeftMs: record.state === 'inProgress' ? record.leaseUntil - Date.now() : null,
    createdAt: record.createdAt,
    completedAt: record.completedAt ?? null,
    expiresAt: record.expiresAt,
    status: record.outcome?.status ?? null,
    takenOver: null,
  };
}
