/**
 * @module A request body declared JSON, parsed once by the adapters that have its bytes (node:http, Hono, Lambda):
 * a body that does not parse is refused (400 `body-unparseable`) before any record exists, and the parsed text is
 * there for the handler.
 */
import { isJsonMediaType } from './media-type.js';

/** The body parsed, when it is declared JSON; `unparseable` when it is declared JSON and does not parse. */
export type JsonBody = { readonly value: unknown; readonly text: string } | 'unparseable' | undefined;

/** Parses a body declared JSON once, so the layer can refuse a broken one before any record exists. */
export function parseJsonBody(contentType: string | undefined | null, bytes: Uint8Array): JsonBody {
  if (bytes.byteLength === 0 || !isJsonMediaType(contentType)) return undefined;
  // Buffer (Node, and the runtimes Hono and Lambda run on) decodes without a TextDecoder per call.
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  try {
    return { value: JSON.parse(text), text };
  } catch {
    return 'unparseable';
  }
}
