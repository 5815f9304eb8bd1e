/**
 * @module Script replies into typed results: each Lua script's return codes decoded in one place, so an unexpected
 * reply (a foreign writer, a truncated field) becomes a `CorruptRecordError` rather than a wrong answer.
 */
import { CorruptRecordError } from '../../core/errors.js';
import type { BeginResult, KeyRecord, TransitionResult } from '../../core/store.js';
import { decodeRecord, decodeReplay } from './record.js';

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
      return { kind: 'replay', ...decodeReplay(reply[1]) };
    case ReplyCode.ok:
      return { kind: 'ok' };
    case ReplyCode.fenced:
      return { kind: 'fenced' };
    case ReplyCode.corrupt:
      throw corrupt(`the key holds ${text(reply[1], 'detail')}, not an oncely record`);
    default:
      throw corrupt(`unknown reply code ${code}`);
  }
}

/**
 * The reply of `begin-1.lua`. Its two common answers are bare values, which cost Redis less than a table: an
 * integer is the token of a first attempt (acquired, attempt 1, no takeover), bytes are the record to replay.
 * Anything else is a coded reply.
 */
export function decodeBeginReply(reply: unknown): BeginResult {
  if (typeof reply === 'number')
    return { kind: 'acquired', token: integer(reply, 'token'), attempt: 1, takeover: false };
  if (Buffer.isBuffer(reply)) return { kind: 'replay', ...decodeReplay(reply) };
  return asBeginResult(decodeReply(reply));
}

/** The reply of `complete-1.lua`, `release-1.lua` and `renew-1.lua`: 5 (ok), 6 (fenced) or a coded reply. */
export function decodeTransitionReply(reply: unknown): TransitionResult {
  if (reply === ReplyCode.ok) return OK;
  if (reply === ReplyCode.fenced) return FENCED;
  return asTransitionResult(decodeReply(reply));
}

const OK: TransitionResult = { kind: 'ok' };
const FENCED: TransitionResult = { kind: 'fenced' };

export function asBeginResult(result: ScriptResult): BeginResult {
  if (result.kind === 'ok' || result.kind === 'fenced') throw corrupt(`begin answered ${result.kind}`);
  return result;
}

export function asTransitionResult(result: ScriptResult): TransitionResult {
  if (result.kind !== 'ok' && result.kind !== 'fenced') throw corrupt(`a transition answered ${result.kind}`);
  return result;
}

/** The reply of `get-1.lua` (the record's bytes, or nil) as a `KeyRecord`. */
export function decodeGetReply(key: string, reply: unknown): KeyRecord | undefined {
  if (reply === null) return undefined;
  if (Array.isArray(reply)) decodeReply(reply); // {-1, what}: throws CorruptRecordError
  return decodeRecord(key, reply);
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
