/**
 * @module The dashboard's lookup of one key: which record a request names (storage key, or scope and key hashed as
 * the adapters hash them), the record with its outcome's status and headers, and its body only when asked for, cut
 * to a preview.
 */
import type { RecordView } from '../core/inspection.js';
import { scopedKey, validateKey } from '../core/key.js';
import { defaultEnvelopeOptions, openOutcome } from '../core/record.js';
import type { BoardSource } from './board-source.js';
import { rowOf } from './keys-panel.js';
import type { KeyBody, KeyDetail } from './model.js';

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

/** A record with its outcome's status and headers; the body only as a byte count (the view carries none). */
export async function lookUp(source: BoardSource, key: string): Promise<KeyDetail> {
  const view = await source.inspector.record(key);
  if (view === undefined) return { found: false, key, record: null, outcome: null };
  const { outcome } = view;
  return {
    found: true,
    key,
    record: detailRow(view),
    outcome:
      outcome === undefined
        ? null
        : {
            status: outcome.status,
            headers: outcome.headers.map(([name, value]) => [name, value] as const),
            encoding: outcome.encoding,
            storage: outcome.storage,
            bodyBytes: outcome.bodyBytes,
          },
  };
}

/** The body of one completed record, decompressed, its first `BODY_PREVIEW_BYTES` as UTF-8 text. */
export async function bodyOf(source: BoardSource, key: string): Promise<KeyBody | undefined> {
  const view = await source.inspector.record(key, { body: true });
  const outcome = view?.outcome;
  if (outcome?.body === undefined) return undefined;
  const opened = await openOutcome({ ...outcome, body: outcome.body }, defaultEnvelopeOptions);
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

function detailRow(view: RecordView): NonNullable<KeyDetail['record']> {
  // A lookup never said whether the claim was a takeover: the lists do, where the store keeps it.
  return { ...rowOf(view), fingerprint: view.fingerprint, takenOver: null };
}
