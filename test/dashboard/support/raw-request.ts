/**
 * Test support (dashboard): a GET with a request-target sent exactly as given, over a real socket. `fetch` (and
 * `new URL`) would normalize `//x/a`, `/./a`, `/a/../b` or backslashes before they leave the client, which hides
 * the very requests a path check must survive.
 */
import { request } from 'node:http';

export interface RawAnswer {
  readonly target: string;
  readonly status: number;
  readonly body: string;
}

export function rawGet(
  baseUrl: string,
  target: string,
  headers: Record<string, string> = {},
): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    // node:http sends `path` verbatim (it refuses only control characters and spaces).
    const req = request(
      { host: hostname, port, path: target, method: 'GET', headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.once('end', () =>
          resolve({ target, status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.once('error', reject);
      },
    );
    req.once('error', reject);
    req.end();
  });
}
