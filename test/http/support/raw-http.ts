import http from 'node:http';

export interface RawResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface RawRequest {
  readonly method?: string;
  readonly path: string;
  /** An array value is sent as that many header lines, as Node's client does. */
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
  readonly body?: string | Buffer;
  /** A keep-alive agent to send requests one after another on one connection. */
  readonly agent?: http.Agent;
}

/**
 * One request with Node's own client, which (unlike fetch) sends an array header value as separate lines and
 * reports a broken response framing as the parser error it is (`HPE_INVALID_CONSTANT`, …).
 */
export function rawRequest(port: number, request: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = http.request(
      {
        host: '127.0.0.1',
        port,
        method: request.method ?? 'POST',
        path: request.path,
        agent: request.agent ?? false,
        headers: request.headers as http.OutgoingHttpHeaders,
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () =>
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            body: Buffer.concat(chunks),
          }),
        );
        incoming.on('error', reject);
        incoming.on('aborted', () => reject(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}

/** A keep-alive agent with one socket: every request it sends after the first rides the same connection. */
export function oneConnection(): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets: 1 });
}
