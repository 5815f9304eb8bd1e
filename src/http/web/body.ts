/**
 * @module Web-standard `Response` bodies and `Headers`, read the way the layer needs them (whole within the cap, or
 * passed on as a stream): for the Hono adapter and for `oncely/fetch`, which run on Node, Bun, Deno and Workers
 * alike.
 */
import { isEventStream } from '../media-type.js';

/**
 * The body of a response read whole, when it ends within `limit` bytes; otherwise (or for an event stream, read not
 * at all) a stream of the part read so far and then the rest as the client pulls it, which calls `onDone` once
 * the body is finished or cancelled.
 */
export async function readCapped(
  response: Response,
  limit: number,
  onDone: () => void,
): Promise<Uint8Array | { readonly stream: ReadableStream<Uint8Array>; readonly eventStream: boolean }> {
  const body = response.body;
  if (body === null) return new Uint8Array(0);
  const eventStream = isEventStream(response.headers.get('content-type'));
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let held = 0;
  // Read while under the cap, and one chunk past it: a body that ends there was in memory anyway (`c.json` of a
  // large value is one chunk) and is stored, as not retained; one that keeps coming streams.
  let past = false;
  while (!eventStream) {
    const next = await reader.read();
    if (next.done) return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    chunks.push(next.value);
    held += next.value.byteLength;
    if (past) break;
    past = held > limit;
  }
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    onDone();
  };
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const chunk = chunks.shift();
      if (chunk !== undefined) return controller.enqueue(chunk);
      try {
        const next = await reader.read();
        if (next.done) {
          controller.close();
          finish();
        } else controller.enqueue(next.value);
      } catch (error) {
        controller.error(error);
        finish();
      }
    },
    cancel(reason) {
      finish();
      return reader.cancel(reason);
    },
  });
  return { stream, eventStream };
}

/** Header pairs of a Web `Headers`, each `Set-Cookie` apart. */
export function pairsOf(headers: Headers): [string, string][] {
  const pairs: [string, string][] = [];
  headers.forEach((value, name) => {
    if (name !== 'set-cookie') pairs.push([name, value]);
  });
  for (const cookie of headers.getSetCookie()) pairs.push(['set-cookie', cookie]);
  return pairs;
}
