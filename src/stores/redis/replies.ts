import { CorruptRecordError } from '../../core/errors.js';
import type {
  BeginResult,
  BodyEncoding,
  BodyStorage,
  HeaderPairs,
  KeyRecord,
  KeyState,
  StoredOutcome,
  TransitionResult,
} from '../../core/store.js';

/** The codes the scripts return as the first element of their reply (see each script's header). */
export const ReplyCode = {
  acquired: 1,
  inProgress: 2,
  mismatch: 3,
  replay: 4,
  ok: 5,
  fenced: 6,
  corrupt: -1,
} as const;

export type ScriptResult = BeginResult | TransitionResult;

/**
 * The one place where script replies become typed results: every code of every transition script is decoded
 * here, and anything unexpected (a foreign writer, a truncated field) becomes a `CorruptRecordError` instead of
 * a wrong answer.
 */
export function decodeReply(reply: unknown): ScriptResult {
  if (!Array.isArray(reply) || typeof reply[0] !== 'number')
    throw corrupt(`unexpected reply ${describe(reply)}`);
  const code: number = reply[0];
  switch (code) {
    case ReplyCode.acquired:
      return {
        kind: 'acquired',
        token: integer(reply[1], 'token'),
        attempt: integer(reply[2], 'attempt'),
        takeover: reply[3] === 1,
      };
    case ReplyCode.inProgress:
      return {
        kind: 'inProgress',
        retryAfterMs: integer(reply[1], 'retryAfterMs'),
        attempt: integer(reply[2], 'attempt'),
      };
    case ReplyCode.mismatch:
      return { kind: 'mismatch' };
    case ReplyCode.replay:
      return {
        kind: 'replay',
        completedAt: integer(reply[1], 'completed at (d)'),
        outcome: decodeOutcome(reply[2], reply[3], reply[4], reply[5], reply[6]),
      };
    case ReplyCode.ok:
      return { kind: 'ok' };
    case ReplyCode.fenced:
      return { kind: 'fenced' };
    case ReplyCode.corrupt:
      throw corrupt(`the record lacks its "${text(reply[1], 'field')}" field`);
    default:
      throw corrupt(`unknown reply code ${code}`);
  }
}

export function asBeginResult(result: ScriptResult): BeginResult {
  if (result.kind === 'ok' || result.kind === 'fenced') throw corrupt(`begin answered ${result.kind}`);
  return result;
}

export function asTransitionResult(result: ScriptResult): TransitionResult {
  if (result.kind !== 'ok' && result.kind !== 'fenced') throw corrupt(`a transition answered ${result.kind}`);
  return result;
}

const STATES: Readonly<Record<string, KeyState>> = { p: 'inProgress', c: 'completed', r: 'released' };

/** The reply of `get-1.lua` (fields s f t a l c d e st h b en sg, or nil) as a `KeyRecord`. */
export function decodeRecord(key: string, reply: unknown): KeyRecord | undefined {
  if (reply === null) return undefined;
  if (!Array.isArray(reply) || reply.length !== 13) throw corrupt(`unexpected record ${describe(reply)}`);
  const [s, f, t, a, l, c, d, e, st, h, b, en, sg] = reply as unknown[];
  const state = STATES[text(s, 'state (s)')];
  if (state === undefined) throw corrupt(`unknown state ${describe(s)}`);
  return {
    key,
    state,
    fingerprint: text(f, 'fingerprint (f)'),
    token: integer(t, 'token (t)'),
    attempt: integer(a, 'attempt (a)'),
    leaseUntil: integer(l, 'lease until (l)'),
    createdAt: integer(c, 'created at (c)'),
    completedAt: state === 'completed' ? integer(d, 'completed at (d)') : undefined,
    expiresAt: integer(e, 'expires at (e)'),
    outcome: state === 'completed' ? decodeOutcome(st, h, b, en, sg) : undefined,
  };
}

const ENCODINGS: readonly BodyEncoding[] = ['identity', 'gzip', 'br'];
const STORAGES: readonly BodyStorage[] = ['inline', 'blob', 'omitted'];

function decodeOutcome(
  status: unknown,
  headers: unknown,
  body: unknown,
  encoding: unknown,
  storage: unknown,
): StoredOutcome {
  if (!Buffer.isBuffer(body)) throw corrupt('the stored body (b) is missing');
  const en = text(encoding, 'encoding (en)') as BodyEncoding;
  const sg = text(storage, 'storage (sg)') as BodyStorage;
  if (!ENCODINGS.includes(en)) throw corrupt(`unknown body encoding "${en}"`);
  if (!STORAGES.includes(sg)) throw corrupt(`unknown body storage "${sg}"`);
  // A copy: the reply buffer may be a view into a larger socket chunk that a long-lived record would pin.
  const bytes = new Uint8Array(body);
  return {
    status: integer(status, 'status (st)'),
    headers: decodeHeaders(headers),
    body: bytes,
    encoding: en,
    storage: sg,
  };
}

/** Headers travel as a JSON array of `[name, value]` pairs: small, ordered, duplicates kept. */
export function encodeHeaders(headers: HeaderPairs): string {
  return JSON.stringify(headers);
}

function decodeHeaders(value: unknown): HeaderPairs {
  let pairs: unknown;
  try {
    pairs = JSON.parse(text(value, 'headers (h)'));
  } catch (cause) {
    throw new CorruptRecordError('the stored headers (h) are not valid JSON', { cause });
  }
  const valid =
    Array.isArray(pairs) &&
    pairs.every(
      (p) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string' && typeof p[1] === 'string',
    );
  if (!valid) throw corrupt('the stored headers (h) are not [name, value] pairs');
  return pairs as HeaderPairs;
}

/** Field values arrive as Buffers (the `…Buffer` command variants) or numbers (Lua integers). */
function text(value: unknown, what: string): string {
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'string') return value;
  throw corrupt(`the ${what} is missing`);
}

function integer(value: unknown, what: string): number {
  const n = typeof value === 'number' ? value : Number(text(value, what));
  if (!Number.isSafeInteger(n)) throw corrupt(`the ${what} is not an integer (${describe(value)})`);
  return n;
}

function corrupt(message: string): CorruptRecordError {
  return new CorruptRecordError(`redis store: ${message}`);
}

function describe(value: unknown): string {
  const shown = Buffer.isBuffer(value) ? value.toString('utf8') : JSON.stringify(value);
  return (shown ?? String(value)).slice(0, 80);
}
