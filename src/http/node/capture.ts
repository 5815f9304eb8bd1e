/**
 * @module The Node response capture, the one every Node-based shell uses (node:http, Express, Nest): everything a
 * handler writes to a `ServerResponse` held back until the outcome is stored, then sent, or replaced by the layer's
 * answer.
 */
// This file's declarations use Node's types (Buffer, node:*): the directive, kept in its .d.ts, loads @types/node
// for users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Outcome } from '../../core/record.js';
import { headerPairs } from '../header-pairs.js';
import { isEventStream } from '../media-type.js';
import type { HttpAnswer } from '../problem.js';
import { writeAnswer } from './answer.js';
import { applyHeaders, headerCopy, sameHeaders } from './headers.js';
import { type Capturing, captureWrites, type Methods, setCapture } from './methods.js';

type Callback = (error?: Error | null) => void;
type Chunk = string | Uint8Array;

/** What the capture tells the adapter. */
export interface CaptureHooks {
  /** The handler ended the response: here it is, whole, nothing sent yet. */
  onEnd(response: Outcome): void;
  /**
   * The handler changed the status or headers after its first `write`/`writeHead` (an error page after a partial
   * body, typically). Without the layer that response could never have been sent: the headers would have gone
   * with the first write, Node refuses to change them after that, and the frameworks close the connection. Nothing
   * was sent; the adapter should let the key go and close the connection the same way.
   */
  onBroken(): void;
  /**
   * Most body bytes held back from `write()`s (give or take the chunk that crosses it: a body that ends right after
   * it is held whole). Past them, and from the start for `text/event-stream`, the response goes out as it is
   * written, `write()` returning what the real response returns (backpressure), and is not captured any further:
   * `onPassThrough` says so, and `onEnd` is never called.
   */
  readonly maxHeldBytes: number;
  onPassThrough(eventStream: boolean): void;
}

/**
 * Holds back everything a handler writes to a `ServerResponse` (`writeHead`, `write`, `end`, and so `res.json`,
 * `res.send`, piped streams) so the outcome can be stored before the client sees a byte. Headers stay in the
 * response's own header map (nothing is flushed until `writeHead` runs for real). `onEnd` receives the whole
 * response when the handler ends it; after `restore` the methods write for real again. (How the methods are
 * swapped in: `methods.ts`.)
 */
export function captureResponse(res: ServerResponse, hooks: CaptureHooks): ResponseCapture {
  return new CaptureState(res, hooks);
}

/** What one captured response has collected so far; also the `ResponseCapture` handed to the adapter. */
class CaptureState implements ResponseCapture, Capturing {
  readonly chunks: Buffer[] = [];
  /** The body as the handler's one string write, when it was exactly that. */
  text: string | undefined;
  readonly callbacks: Callback[] = [];
  #ended = false;
  #held = 0;
  /** Status and headers as they were when the handler first wrote (when the real response would have sent them). */
  #committed: { readonly status: number; readonly headers: OutgoingHttpHeaders } | undefined;

  /**
   * The methods the capture wraps. What the capture sends goes through these, not through `res.end`: a middleware
   * mounted after the layer (compression in a route's chain) put its own `end` over the capture's, has done its
   * work on the way in already, and has ended itself; one mounted before it is below, and does its work on the way
   * out.
   */
  readonly below: Methods;

  /** Captures the writes of `res` from here on. */
  constructor(
    readonly res: ServerResponse,
    readonly hooks: CaptureHooks,
  ) {
    this.below = captureWrites(res, this);
  }

  writeHead(status: number, reason: unknown, headers: unknown): ServerResponse {
    const { res } = this;
    if (typeof reason === 'string') res.statusMessage = reason;
    else headers = reason;
    res.statusCode = status;
    if (headers !== undefined && headers !== null) applyHeaders(res, headers);
    this.commit();
    if (isEventStream(res.getHeader('content-type'))) {
      this.#passThrough(true);
      this.below.writeHead.call(res, status);
    }
    return res;
  }

  /** `flushHeaders`: a no-op while held, except for an event stream, which goes out from here. */
  flushHeaders(): undefined {
    this.commit();
    if (isEventStream(this.res.getHeader('content-type'))) {
      this.#passThrough(true);
      this.below.flushHeaders.call(this.res);
    }
    return undefined;
  }

  /** The real response would send its status and headers now: note them, they cannot change after this. */
  commit(): undefined {
    this.#committed ??= { status: this.res.statusCode, headers: headerCopy(this.res.getHeaders()) };
    return undefined;
  }

  write(chunk: Chunk, encoding: unknown, callback: unknown): boolean {
    this.commit();
    const eventStream = isEventStream(this.res.getHeader('content-type'));
    // The chunk that crosses the cap is still held (it is in memory already, and a body that ends right after it
    // was handed over whole); another one after it means the body keeps coming.
    if (eventStream || (this.#held > this.hooks.maxHeldBytes && chunk !== null && chunk !== undefined)) {
      // Holding more would grow without bound (an export, an endless stream): send what is held and let the rest
      // go out as it is written, so the real response's backpressure reaches the writer.
      this.#passThrough(eventStream);
      return this.below.write.call(this.res, chunk, encoding, callback) as boolean;
    }
    this.#add(chunk, encoding);
    const done = typeof encoding === 'function' ? encoding : callback;
    if (typeof done === 'function') process.nextTick(done as Callback);
    // Held in memory (bounded by maxHeldBytes): nothing to wait for.
    return true;
  }

  /** From now on the response writes for real: the held part first, then whatever the handler writes. */
  #passThrough(eventStream: boolean): void {
    this.restore();
    this.hooks.onPassThrough(eventStream);
    const { res, chunks, below } = this;
    for (const held of chunks) below.write.call(res, held);
    chunks.length = 0;
    this.text = undefined;
    this.#held = 0;
  }

  end(chunk: unknown, encoding: unknown, callback: unknown): ServerResponse {
    const { res } = this;
    if (typeof chunk === 'function') callback = chunk;
    else {
      if (typeof encoding === 'function') callback = encoding;
      this.#add(chunk as Chunk | undefined, encoding);
    }
    if (typeof callback === 'function') this.callbacks.push(callback as Callback);
    if (!this.#ended) {
      this.#ended = true;
      const committed = this.#committed;
      const headers = res.getHeaders();
      if (committed !== undefined) {
        // Node throws on a header set after the headers went out, and the frameworks then close the connection.
        if (!sameHeaders(committed.headers, headers)) {
          this.hooks.onBroken();
          return res;
        }
        // A status set after them is silently ignored: the client gets the one already sent.
        res.statusCode = committed.status;
      }
      const { chunks } = this;
      this.hooks.onEnd({
        status: res.statusCode,
        headers: headerPairs(headers),
        body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks),
      });
    }
    return res;
  }

  restore(): void {
    setCapture(this.res, undefined);
  }

  flushCallbacks(): void {
    for (const callback of this.callbacks) callback();
  }

  get sendable(): string | Buffer {
    return this.text ?? (this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks));
  }

  send(): void {
    const { callbacks, below, res } = this;
    // A callback on `end` costs a 'finish' listener; most handlers pass none.
    if (callbacks.length === 0) below.end.call(res, this.sendable);
    else below.end.call(res, this.sendable, () => this.flushCallbacks());
  }

  answer(answer: HttpAnswer): void {
    this.restore();
    writeAnswer(this.res, answer, true, this.below.end);
  }

  #add(chunk: Chunk | null | undefined, encoding: unknown): void {
    if (chunk === null || chunk === undefined || this.#ended) return;
    let buffer: Buffer;
    if (typeof chunk === 'string') {
      const utf8 = typeof encoding !== 'string' || encoding === 'utf8' || encoding === 'utf-8';
      this.text = this.chunks.length === 0 && utf8 ? chunk : undefined;
      buffer = Buffer.from(chunk, utf8 ? 'utf8' : (encoding as BufferEncoding));
    } else {
      this.text = undefined;
      buffer = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    }
    this.chunks.push(buffer);
    this.#held += buffer.byteLength;
  }
}

export interface ResponseCapture {
  /** From now on the response's methods write for real. */
  restore(): void;
  /**
   * The captured body in the form the handler wrote it: a handler's single string stays a string, which Node
   * writes together with the headers in one go (cheaper than a Buffer after a string header).
   */
  readonly sendable: string | Buffer;
  /** Calls the callbacks the handler passed to `end`, once the real response finished. */
  flushCallbacks(): void;
  /** Ends the real response with the captured body (after `restore`), then calls the handler's callbacks. */
  send(): void;
  /** Sends an answer of the layer in place of the handler's response (restores first; drops the handler's headers). */
  answer(answer: HttpAnswer): void;
}
