// HTTP/1.1 over raw sockets for the fuzz: requests are written as the exact bytes the generator chose (any header
// bytes, chunked or sized bodies, split into arbitrary writes, pipelined), and responses are parsed strictly, so a
// mis-framed answer shows up as a parse error instead of being smoothed over by a client library.
import { connect, type Socket } from 'node:net';

export interface WireResponse {
  readonly status: number;
  /** Lower-case names, in order, repeated names kept. */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly body: Buffer;
  /** The server said it closes the connection after this response (or it is HTTP/1.0). */
  readonly closes: boolean;
}

export const header = (response: WireResponse, name: string): string | undefined =>
  response.headers.find(([n]) => n === name)?.[1];

export class ParseError extends Error {
  override name = 'ParseError';
}

const CRLF2 = Buffer.from('\r\n\r\n');

/**
 * Parses one response at the start of `buf` (interim 1xx responses are skipped); undefined when more bytes are
 * needed. `head` is true for a response to HEAD (no body whatever its headers say); `ended` when the peer closed,
 * which ends a body delimited by the close.
 */
export function parseResponse(
  buf: Buffer,
  head: boolean,
  ended: boolean,
): { response: WireResponse; used: number } | undefined {
  let offset = 0;
  for (;;) {
    const end = buf.indexOf(CRLF2, offset);
    if (end === -1) {
      if (buf.length - offset > 64 * 1024) throw new ParseError('response head longer than 64 KiB');
      return undefined;
    }
    const lines = buf.toString('latin1', offset, end).split('\r\n');
    const statusLine = /^HTTP\/1\.([01]) (\d{3})(?: .*)?$/.exec(lines[0] ?? '');
    if (statusLine === null)
      throw new ParseError(`bad status line ${JSON.stringify(lines[0]?.slice(0, 80))}`);
    const status = Number(statusLine[2]);
    const headers: [string, string][] = [];
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0 || /[\s]/.test(line.slice(0, colon)))
        throw new ParseError(`bad header line ${JSON.stringify(line.slice(0, 80))}`);
      headers.push([line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]);
    }
    const bodyStart = end + 4;
    if (status >= 100 && status < 200) {
      offset = bodyStart;
      continue;
    }
    const connection = headers.find(([n]) => n === 'connection')?.[1].toLowerCase() ?? '';
    const closes = statusLine[1] === '0' ? !connection.includes('keep-alive') : connection.includes('close');
    const lengths = headers.filter(([n]) => n === 'content-length').map(([, v]) => v);
    const chunked = headers.some(([n, v]) => n === 'transfer-encoding' && /chunked/i.test(v));
    if (chunked && lengths.length > 0) throw new ParseError('both Transfer-Encoding and Content-Length');
    if (new Set(lengths).size > 1) throw new ParseError(`conflicting Content-Length ${lengths.join(', ')}`);
    const make = (body: Buffer, used: number) => ({ response: { status, headers, body, closes }, used });
    if (head || status === 204 || status === 304) return make(Buffer.alloc(0), bodyStart);
    if (chunked) {
      const chunks: Buffer[] = [];
      let at = bodyStart;
      for (;;) {
        const lineEnd = buf.indexOf('\r\n', at);
        if (lineEnd === -1) return undefined;
        const size = Number.parseInt(buf.toString('latin1', at, lineEnd).split(';')[0]!, 16);
        if (!Number.isInteger(size) || size < 0) throw new ParseError('bad chunk size');
        if (size === 0) {
          const trailerEnd = buf.indexOf(CRLF2, lineEnd);
          const plainEnd = buf.subarray(lineEnd, lineEnd + 4).equals(CRLF2) ? lineEnd : -1;
          const done = plainEnd !== -1 ? plainEnd : trailerEnd;
          if (done === -1) return undefined;
          return make(Buffer.concat(chunks), done + 4);
        }
        if (buf.length < lineEnd + 2 + size + 2) return undefined;
        chunks.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
        if (buf.toString('latin1', lineEnd + 2 + size, lineEnd + 4 + size) !== '\r\n')
          throw new ParseError('chunk not followed by CRLF');
        at = lineEnd + 4 + size;
      }
    }
    if (lengths.length === 1) {
      const length = Number(lengths[0]);
      if (!Number.isSafeInteger(length) || length < 0)
        throw new ParseError(`bad Content-Length ${lengths[0]}`);
      if (buf.length < bodyStart + length) return undefined;
      return make(Buffer.from(buf.subarray(bodyStart, bodyStart + length)), bodyStart + length);
    }
    // Neither: the body runs to the end of the connection.
    if (!ended) return undefined;
    return make(Buffer.from(buf.subarray(bodyStart)), buf.length);
  }
}

/** What became of one request on a connection. */
export type Exchange =
  | { readonly kind: 'response'; readonly response: WireResponse }
  | { readonly kind: 'closed'; readonly trace: string }
  | { readonly kind: 'timeout'; readonly trace: string }
  | { readonly kind: 'malformed'; readonly error: string; readonly trace: string };

/**
 * One keep-alive connection: `exchange` writes requests (each as its pieces, with a pause between pieces when
 * asked) and reads their responses in order. After a close, a timeout or a malformed response the connection is
 * done; the caller opens a new one.
 */
export class Connection {
  readonly #socket: Socket;
  #buffer: Buffer = Buffer.alloc(0);
  // The last bytes written and read on this connection, to show what came before a broken exchange.
  #sent: Buffer = Buffer.alloc(0);
  #read: Buffer = Buffer.alloc(0);
  #ended = false;
  #wake: (() => void) | undefined;
  readonly ready: Promise<void>;

  constructor(port: number) {
    this.#socket = connect({ host: '127.0.0.1', port, noDelay: true });
    this.ready = new Promise((resolve, reject) => {
      this.#socket.once('connect', resolve);
      this.#socket.once('error', reject);
    });
    this.#socket.on('data', (chunk: Buffer) => {
      this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
      this.#read = Buffer.concat([this.#read, chunk]).subarray(-3000);
      this.#wake?.();
    });
    this.#socket.on('error', () => {});
    this.#socket.on('close', () => {
      this.#ended = true;
      this.#wake?.();
    });
  }

  get usable(): boolean {
    return !this.#ended && !this.#socket.destroyed;
  }

  close(): void {
    this.#socket.destroy();
  }

  /** Sends `requests` back to back (pipelined when more than one) and reads one response for each. */
  async exchange(
    requests: ReadonlyArray<{ readonly pieces: readonly Buffer[]; readonly head: boolean }>,
    timeoutMs: number,
  ): Promise<Exchange[]> {
    for (const { pieces } of requests) {
      for (const [index, piece] of pieces.entries()) {
        if (this.#ended) break;
        this.#socket.write(piece);
        this.#sent = Buffer.concat([this.#sent, piece]).subarray(-3000);
        if (index < pieces.length - 1) await new Promise((resolve) => setImmediate(resolve));
      }
    }
    const results: Exchange[] = [];
    const deadline = Date.now() + timeoutMs;
    for (const { head } of requests) {
      for (;;) {
        let parsed: ReturnType<typeof parseResponse>;
        try {
          parsed = parseResponse(this.#buffer, head, this.#ended);
        } catch (error) {
          this.close();
          results.push({ kind: 'malformed', error: (error as Error).message, trace: this.trace() });
          break;
        }
        if (parsed !== undefined) {
          this.#buffer = this.#buffer.subarray(parsed.used);
          results.push({ kind: 'response', response: parsed.response });
          if (parsed.response.closes) this.close();
          break;
        }
        if (this.#ended) {
          results.push({ kind: 'closed', trace: this.trace() });
          break;
        }
        const left = deadline - Date.now();
        if (left <= 0) {
          this.close();
          results.push({ kind: 'timeout', trace: this.trace() });
          break;
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          this.#wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.#wake = undefined;
      }
      // A connection the server has closed may still hold the answers it wrote before: read on until the buffer
      // has none (a close seen before the data was parsed must not cost those requests their answers).
      const last = results.at(-1);
      if (last?.kind !== 'response' || last.response.closes) break;
    }
    while (results.length < requests.length) results.push({ kind: 'closed', trace: this.trace() });
    return results;
  }

  /** The connection's recent bytes, both ways, as JSON-escaped latin1 text. */
  trace(): string {
    return JSON.stringify({ sent: this.#sent.toString('latin1'), read: this.#read.toString('latin1') });
  }
}
