/**
 * @module XREADGROUP and XAUTOCLAIM replies read the same whichever protocol the caller's client speaks (RESP2, or
 * RESP3 with either `replyMapping`), so the consumer takes any ioredis client as it is configured.
 */
import { parseEntry, type StreamEntry } from './fields.js';

/**
 * The entries of one stream in an XREADGROUP / XAUTOCLAIM reply, whichever protocol the client speaks. ioredis 6
 * speaks RESP3 by default, where XREADGROUP answers a map (stream → entries), not RESP2's list of pairs:
 *
 * - RESP2:                             `[[stream, entries]]`
 * - RESP3, `replyMapping: 'legacy'`:   `[stream, entries]` (the map flattened; ioredis 6's default)
 * - RESP3, `replyMapping: 'resp3'`:    `{ [stream]: entries }` (a plain object; a `Map` is accepted too)
 *
 * XAUTOCLAIM answers an array in every protocol: `[cursor, entries, deletedIds?]`. An entry is `[id, fields]`
 * with `fields` a flat `[name, value, …]` list in both protocols, or null for an entry deleted from the stream
 * while it was pending.
 */
export interface ParsedEntries {
  readonly entries: StreamEntry[];
  /** Pending entries whose content is gone (deleted from the stream): nothing to handle, only to acknowledge. */
  readonly deleted: string[];
}

export class UnexpectedReplyError extends Error {
  override name = 'UnexpectedReplyError' as const;
  constructor(command: string, reply: unknown) {
    super(`unexpected ${command} reply: ${describe(reply)}`);
  }
}

/** The entries of an XREADGROUP reply for `stream` (null: the BLOCK timed out with nothing new). */
export function readGroupEntries(stream: string, reply: unknown): ParsedEntries {
  if (reply === null || reply === undefined) return { entries: [], deleted: [] };
  return entriesOf(stream, 'XREADGROUP', streamEntries(reply), reply);
}

/** The cursor and entries of an XAUTOCLAIM reply. */
export function autoClaimEntries(
  stream: string,
  reply: unknown,
): ParsedEntries & { readonly cursor: string } {
  if (!Array.isArray(reply) || reply.length < 2 || !Array.isArray(reply[1]))
    throw new UnexpectedReplyError('XAUTOCLAIM', reply);
  return { cursor: String(reply[0]), ...entriesOf(stream, 'XAUTOCLAIM', reply[1], reply) };
}

/** The one stream's entry list, from any of the three shapes; undefined when the shape is none of them. */
function streamEntries(reply: unknown): unknown {
  if (Array.isArray(reply)) {
    if (reply.length === 0) return [];
    // RESP2: a list of [name, entries] pairs. The name is bytes or a string, never an array.
    if (Array.isArray(reply[0])) return (reply[0] as unknown[])[1];
    return reply[1];
  }
  if (reply instanceof Map) return reply.values().next().value;
  if (typeof reply === 'object' && reply !== null) return Object.values(reply)[0];
  return undefined;
}

function entriesOf(stream: string, command: string, list: unknown, reply: unknown): ParsedEntries {
  if (!Array.isArray(list)) throw new UnexpectedReplyError(command, reply);
  const entries: StreamEntry[] = [];
  const deleted: string[] = [];
  for (const raw of list) {
    if (Array.isArray(raw) && raw.length >= 2 && raw[1] === null) {
      deleted.push(String(raw[0]));
      continue;
    }
    const entry = parseEntry(stream, raw);
    if (entry === undefined) throw new UnexpectedReplyError(command, reply);
    entries.push(entry);
  }
  return { entries, deleted };
}

function describe(reply: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(reply, (_, value: unknown) =>
      value instanceof Map ? Object.fromEntries(value) : value,
    );
  } catch {
    // Unserializable (a cycle): its type says enough for the message.
    text = Object.prototype.toString.call(reply);
  }
  return text === undefined ? String(reply) : text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
