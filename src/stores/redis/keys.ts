/**
 * @module Where the Redis store keeps things: the names of records, completion channels and the SCAN pattern, all
 * derived from the prefix in one place, so every part of the store (scripts, inspector, stats) agrees on them.
 */
/**
 * Where a record lives in Redis. One STRING per record at `<prefix>:{<key>}` (oncely 0.1 kept a HASH there): the
 * braces are a hash tag, so any helper key a future script adds for the same record lands in the same Cluster
 * slot, while different records spread over all slots. Completion notices go out on `<prefix>:settled:<key>`
 * (pub/sub channels have no slot), only for records a waiter registered on.
 */
export interface KeyLayout {
  readonly prefix: string;
  /** The Redis key holding the record of `key`. */
  record(key: string): string;
  /** The pub/sub channel that announces `key` left the in-progress state. */
  channel(key: string): string;
  /** The `SCAN MATCH` pattern covering every record under the prefix. */
  readonly scanPattern: string;
  /** The store key back from a record's Redis key, or undefined for a key outside the layout. */
  keyOf(recordKey: string): string | undefined;
}

export function keyLayout(prefix: string): KeyLayout {
  const head = `${prefix}:{`;
  return {
    prefix,
    record: (key) => `${head}${key}}`,
    channel: (key) => `${prefix}:settled:${key}`,
    scanPattern: `${escapeGlob(head)}*}`,
    keyOf: (recordKey) =>
      recordKey.startsWith(head) && recordKey.endsWith('}') ? recordKey.slice(head.length, -1) : undefined,
  };
}

/** Escapes the characters `SCAN MATCH` treats as a pattern, so a prefix is matched literally. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
