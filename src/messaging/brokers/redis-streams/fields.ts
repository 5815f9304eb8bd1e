/**
 * @module An outbox message as a Redis stream entry: the field names, the entry the publisher writes, and the
 * entry a consumer reads back with those fields decoded.
 */
// This file's declarations use Node's types (Buffer, node:*): the directive, kept in its .d.ts, loads @types/node
// for users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import type { OutboxMessage } from '../../publisher.js';

/** Field names of an outbox message in a Redis stream entry. */
export const FIELD = {
  id: 'oncely-id',
  topic: 'topic',
  key: 'key',
  contentType: 'content-type',
  headers: 'headers',
  payload: 'payload',
} as const;

/** An entry read from a stream, with the outbox fields decoded (when the outbox wrote it). */
export interface StreamEntry {
  readonly stream: string;
  /** The stream's own entry id (`1700000000000-0`): differs between two copies of one outbox message. */
  readonly entryId: string;
  /** The outbox id when present (`oncely-id`), else `<stream>:<entryId>`. The inbox deduplicates on it. */
  readonly id: string;
  readonly topic: string | undefined;
  readonly key: string | undefined;
  readonly contentType: string | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly payload: Buffer;
  /** Every field as raw bytes, for entries other writers added. */
  readonly fields: ReadonlyMap<string, Buffer>;
}

export function entryFields(message: OutboxMessage): (string | Buffer)[] {
  const fields: (string | Buffer)[] = [
    FIELD.id,
    message.id,
    FIELD.topic,
    message.topic,
    FIELD.contentType,
    message.contentType,
    FIELD.headers,
    JSON.stringify(message.headers),
    FIELD.payload,
    Buffer.from(message.payload.buffer, message.payload.byteOffset, message.payload.byteLength),
  ];
  if (message.key !== null) fields.push(FIELD.key, message.key);
  return fields;
}

/** Decodes one `[entryId, [field, value, …]]` pair of an XREADGROUP / XAUTOCLAIM reply. */
export function parseEntry(stream: string, raw: unknown): StreamEntry | undefined {
  if (!Array.isArray(raw) || raw.length < 2 || !Array.isArray(raw[1])) return undefined;
  const entryId = String(raw[0]);
  const list = raw[1] as Buffer[];
  const fields = new Map<string, Buffer>();
  for (let i = 0; i + 1 < list.length; i += 2) fields.set(String(list[i]), Buffer.from(list[i + 1]!));
  const text = (name: string) => fields.get(name)?.toString('utf8');
  let headers: Record<string, string> = {};
  try {
    const parsed: unknown = JSON.parse(text(FIELD.headers) ?? '{}');
    if (parsed !== null && typeof parsed === 'object') headers = parsed as Record<string, string>;
  } catch {
    // A foreign entry with a non-JSON "headers" field: keep the raw bytes in `fields`.
  }
  return {
    stream,
    entryId,
    id: text(FIELD.id) ?? `${stream}:${entryId}`,
    topic: text(FIELD.topic),
    key: text(FIELD.key),
    contentType: text(FIELD.contentType),
    headers,
    payload: fields.get(FIELD.payload) ?? Buffer.alloc(0),
    fields,
  };
}
