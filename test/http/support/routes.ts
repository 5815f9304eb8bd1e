/**
 * The routes every adapter's test app serves, with the same observable behaviour, each written in the
 * framework's own idiom (res.json / reply.send / c.json / res.end, streams, Buffers), so one table of cases can
 * run against all of them. `n` is how many times the handler ran for (route, key): replays must not bump it.
 *
 * | route | answer |
 * | --- | --- |
 * | POST /payments | 201 JSON { id (random), n, body }, x-handler: yes, set-cookie: session=abc and theme=dark |
 * | POST /text | 200 text/plain `hello <n>` |
 * | POST /binary | 200 application/octet-stream, bytes 0..255 then n |
 * | POST /stream | 200 text/plain written in three chunks `part1-part2-<n>` |
 * | POST /partial | Express and node: 201 text/plain, `x-partial: <chunks>:<mode>` writes `part<i>-` chunks, then `end` ends with `done`, `throw` throws, `header` sets a header, `status` sets 500 |
 * | POST /empty | 204 |
 * | POST /status/:code | <code> JSON { n } |
 * | POST /fail-once | 500 on the first run for a key, 201 JSON { n } after |
 * | POST /throw | throws on the first run for a key, 201 JSON { n } after |
 * | POST /skip | 201 JSON { n }, opting out of storage |
 * | POST /large | 201 JSON { n, pad } of about 8 KB |
 * | POST /slow | waits for the test to open the key's gate, then 201 JSON { n, id } |
 * | POST /defer | 202 at once (defer); the work waits for the gate, then 201 JSON { n } |
 * | GET /operations/:id | the status route |
 * | GET /payments | 200 JSON { n } (a safe method: never handled) |
 */
export const LARGE_PAD = 'x'.repeat(8000);

export class Counters {
  readonly #counts = new Map<string, number>();
  /** Handler runs of every route and key together. */
  total = 0;
  bump(route: string, key: string | undefined): number {
    this.total++;
    const name = `${route}|${key ?? '(none)'}`;
    const n = (this.#counts.get(name) ?? 0) + 1;
    this.#counts.set(name, n);
    return n;
  }
  get(route: string, key: string | undefined): number {
    return this.#counts.get(`${route}|${key ?? '(none)'}`) ?? 0;
  }
}

/** Lets a test hold a handler mid-flight: the handler awaits `wait(key)` until the test calls `open(key)`. */
export class Gates {
  readonly #gates = new Map<string, { promise: Promise<void>; open: () => void }>();
  #get(key: string) {
    let gate = this.#gates.get(key);
    if (gate === undefined) {
      let open!: () => void;
      const promise = new Promise<void>((resolve) => {
        open = resolve;
      });
      gate = { promise, open };
      this.#gates.set(key, gate);
    }
    return gate;
  }
  wait(key: string): Promise<void> {
    return this.#get(key).promise;
  }
  open(key: string): void {
    this.#get(key).open();
  }
  /** Set when a handler reached its gate, so a test knows the first request is in flight. */
  readonly arrived = new Set<string>();
}

export function binaryBody(n: number): Buffer {
  return Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, index) => index)), Buffer.from([n])]);
}
