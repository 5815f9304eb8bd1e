/**
 * @module Fastify's own capture: an `onSend` payload (a string, bytes, a Node stream) read into the bytes to store, or
 * let through as a stream when it grows past the cap or is an event stream.
 */
import { Readable } from 'node:stream';

/** A payload that goes out as it comes: the part read so far, then the rest of the source. */
export interface Passing {
  readonly stream: Readable;
  readonly eventStream: boolean;
}

/** The bytes of a payload held in memory (nothing, a string, bytes); undefined for a stream or anything else. */
export function payloadInMemory(payload: unknown): Buffer | undefined {
  if (payload === null || payload === undefined) return Buffer.alloc(0);
  if (typeof payload === 'string') return Buffer.from(payload, 'utf8');
  if (Buffer.isBuffer(payload)) return payload;
  if (payload instanceof Uint8Array)
    return Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  return undefined;
}

/**
 * The payload's bytes, or, for a stream that grows past `limit` (or any event stream), a stream that sends the
 * part read so far and then the rest as it comes (pulled on demand, so the client's pace holds the source back).
 */
export async function payloadBytes(
  payload: unknown,
  limit: number,
  eventStream: boolean,
): Promise<Buffer | Passing> {
  const inMemory = payloadInMemory(payload);
  if (inMemory !== undefined) return inMemory;
  if (typeof (payload as Readable).pipe === 'function') {
    const source = (payload as Readable)[Symbol.asyncIterator]();
    const chunks: Buffer[] = [];
    let held = 0;
    // Read while under the cap, and one chunk past it: a body that ends there was in memory anyway (one big
    // chunk) and is stored like a Buffer; one that keeps coming streams.
    let past = false;
    while (!eventStream) {
      const next = await source.next();
      if (next.done) return Buffer.concat(chunks);
      const chunk: Buffer = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
      chunks.push(chunk);
      held += chunk.byteLength;
      if (past) break;
      past = held > limit;
    }
    async function* rest() {
      try {
        yield* chunks;
        for (;;) {
          const next = await source.next();
          if (next.done) return;
          yield next.value;
        }
      } finally {
        // Cut short (the client went away): the source stops too.
        await source.return?.();
      }
    }
    return { stream: Readable.from(rest(), { objectMode: false }), eventStream };
  }
  return Buffer.from(String(payload), 'utf8');
}
