// The fuzz phase of `npm run proof`: generated requests (100,000 by default) against the four adapters (Express,
// Fastify, Hono on @hono/node-server, node:http), each an app server process of its own on a RedisStore, sent as raw
// bytes over keep-alive connections (proof/fuzz/wire.ts) so that framing can be fuzzed too. It holds the layer to:
//
//   - no 5xx: every answer is the handler's or a documented 4xx (the routes never answer 5xx on purpose);
//   - no crash: every app server is still running at the end, and exits cleanly;
//   - framing: every answer parses, and a valid request is never left unanswered (closed or hung);
//   - replays: an immediate retry of a sample of stored answers is a byte-identical replay;
//   - no corrupted record: afterwards every record under the run's prefix decodes (`store.get`), none is left in
//     progress, every answer the handler gave that the policy keeps has its completed record, and every completed
//     record replays, byte for byte, to the request that created it.
//
// Usage: node --import tsx proof/fuzz.ts [--requests N] [--seed S] [--connections C]; `npm run proof` runs it
// after the exactly-once phases (proof/run.ts), test/proof/fuzz.test.ts a short run in `npm test`.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { RedisStore } from '../src/stores/redis/index.js';
import { keyLinesOf, type RequestSpec, requestArbitrary, serialize } from './fuzz/requests.js';
import {
  ADAPTERS,
  type Adapter,
  type FuzzServerConfig,
  HANDLED,
  isKept,
  KEY_HEADER,
  MAX_BODY_BYTES,
} from './fuzz/shared.js';
import { Connection, type Exchange, header, type WireResponse } from './fuzz/wire.js';

export interface FuzzSettings {
  /** Generated requests in all, spread evenly over the four adapters. */
  readonly requests: number;
  readonly seed: number;
  /** Keep-alive connections per adapter. */
  readonly connections: number;
  readonly redisUrl: string;
  /** Share of answers kept by the policy that are retried at once (a replay check during the run). */
  readonly retryShare: number;
  readonly log: (line: string) => void;
}

export interface Finding {
  readonly adapter: Adapter;
  readonly what: string;
  readonly detail: string;
  /** The request's bytes (base64, first 2 KiB), to replay it by hand. */
  readonly request: string;
}

export interface AdapterFigures {
  requests: number;
  malformedSent: number;
  pipelined: number;
  retries: number;
  statuses: Record<string, number>;
  closedWithoutAnswer: number;
  records: number;
  replayed: number;
}

export interface FuzzReport {
  readonly runId: string;
  readonly seed: number;
  readonly requests: number;
  readonly durationMs: number;
  readonly adapters: Record<Adapter, AdapterFigures>;
  readonly records: number;
  readonly replaysChecked: number;
  /** Records of requests whose answer was lost with their connection (malformed bytes after them, a drop). */
  readonly unansweredRecords: number;
  readonly findings: readonly Finding[];
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EXCHANGE_TIMEOUT_MS = 15_000;
const MALFORMED_PATIENCE_MS = 10_000;
const PIPELINE_SHARE = 0.05;
const MAX_FINDINGS = 200;

interface Seen {
  readonly adapter: Adapter;
  readonly spec: RequestSpec;
  readonly response: WireResponse;
}

export async function runFuzz(settings: FuzzSettings): Promise<FuzzReport> {
  const runId = randomUUID().slice(0, 8);
  const prefix = `oncely-fuzz-${runId}`;
  const started = Date.now();
  const findings: Finding[] = [];
  const note = (adapter: Adapter, what: string, detail: string, spec?: RequestSpec) => {
    if (findings.length < MAX_FINDINGS) {
      const request =
        spec === undefined ? '' : Buffer.concat(serialize(spec)).subarray(0, 2048).toString('base64');
      findings.push({ adapter, what, detail: detail.slice(0, 6000), request });
    }
  };
  const figures = Object.fromEntries(
    ADAPTERS.map((adapter) => [
      adapter,
      {
        requests: 0,
        malformedSent: 0,
        pipelined: 0,
        retries: 0,
        statuses: {},
        closedWithoutAnswer: 0,
        records: 0,
        replayed: 0,
      } satisfies AdapterFigures,
    ]),
  ) as Record<Adapter, AdapterFigures>;
  // Every answer the handler gave under a claim, by storage key (the first one for each).
  const seen = new Map<string, Seen>();
  // Which request each claim was made for, as the app servers report it; and, by id, the requests whose answer
  // may never have reached the client although their handler ran (malformed ones, and 409s to a resent copy).
  const claims = new Map<string, string[]>();
  const unansweredById = new Map<string, RequestSpec>();
  // What each request got, for the finding of a record no answer accounts for.
  const gotById = new Map<string, { spec: RequestSpec; got: string }>();

  const servers = await Promise.all(
    ADAPTERS.map((adapter) => startServer({ adapter, redisUrl: settings.redisUrl, prefix }, claims)),
  );
  settings.log(
    `fuzz ${runId}: ${settings.requests.toLocaleString('en-US')} requests, seed ${settings.seed}, ${settings.connections} connections per adapter`,
  );
  let sent = 0;
  const progress = setInterval(
    () => settings.log(`fuzz: ${sent.toLocaleString('en-US')} requests sent, ${findings.length} findings`),
    15_000,
  );
  try {
    await Promise.all(
      servers.map(async (server, index) => {
        const adapter = server.adapter;
        const share =
          Math.floor(settings.requests / ADAPTERS.length) + (index < settings.requests % 4 ? 1 : 0);
        let identity = 0;
        let counter = 0;
        const arbitrary = requestArbitrary(
          () => `Bearer fuzz-${runId}-${adapter}-${++identity}`,
          () => `${adapter}-${++counter}`,
        );
        const specs = generate(arbitrary, settings.seed + index * 1_000_003, share);
        const random = mulberry32(settings.seed + index);
        const worker = async () => {
          const client = new KeptAlive(server.port);
          for (;;) {
            const batch: RequestSpec[] = [];
            const first = specs.next();
            if (first.done) break;
            batch.push(first.value);
            if (first.value.malformed === undefined && random() < PIPELINE_SHARE) {
              for (let extra = 0; extra < 2; extra++) {
                const next = specs.next();
                if (next.done) break;
                batch.push(next.value);
              }
              batch.splice(0, batch.length, ...pipelined(batch));
            }
            const malformed = batch.filter((spec) => spec.malformed !== undefined);
            const wellFormed = batch.filter((spec) => spec.malformed === undefined);
            for (const spec of malformed) {
              sent++;
              figures[adapter].requests++;
              figures[adapter].malformedSent++;
              const response = await sendMalformed(
                server.port,
                spec,
                (what, detail) => note(adapter, what, detail, spec),
                figures[adapter],
              );
              // Its first message may have run (on Hono and node:http a body over the fuzz's limit is read too).
              unansweredById.set(spec.id, spec);
              gotById.set(spec.id, { spec, got: `${response?.status ?? 'no answer'}, sent alone` });
              // Bytes after a complete request may be the broken part: the first request was then answered.
              const key = response === undefined ? undefined : header(response, KEY_HEADER);
              if (key !== undefined && (!seen.has(key) || !isKept(seen.get(key)!.response.status)))
                seen.set(key, { adapter, spec, response: response! });
            }
            if (wellFormed.length === 0) continue;
            if (wellFormed.length > 1) figures[adapter].pipelined += wellFormed.length;
            const results = await client.exchange(wellFormed);
            // Once the server ends the connection after a request (an answer with `Connection: close`, or a body
            // over its limit refused by closing), the requests pipelined behind it are never read: RFC 9112 §9.6
            // has the client send them again on a new connection. A body over the limit may also end the
            // connection before the answers to the requests pipelined ahead of it went out. Those answers are not
            // owed; a request among them that ran anyway left a record, which the final check replays to it.
            let closedBefore = false;
            const oversizedFrom = wellFormed.findIndex((spec) => spec.body.length > MAX_BODY_BYTES);
            for (const [position, spec] of wellFormed.entries()) {
              sent++;
              figures[adapter].requests++;
              const result = results[position]!;
              gotById.set(spec.id, {
                spec,
                got: `${result.kind === 'response' ? result.response.status : result.kind}, ${position + 1} of ${wellFormed.length} pipelined`,
              });
              if (result.kind === 'closed') unansweredById.set(spec.id, spec);
              if (
                result.kind === 'closed' &&
                (closedBefore || (oversizedFrom >= 0 && position < oversizedFrom))
              ) {
                figures[adapter].closedWithoutAnswer++;
                continue;
              }
              const earlier = result.kind === 'response' ? result.response.closes : true;
              closedBefore ||= earlier || spec.body.length > MAX_BODY_BYTES;
              if (result.kind === 'closed' && (await refusedBeforeItsBody(server.port, spec))) {
                figures[adapter].closedWithoutAnswer++;
                continue;
              }
              const response = checkAnswer(adapter, spec, result, figures[adapter], note);
              if (response === undefined) continue;
              const key = header(response, KEY_HEADER);
              // A key's record is made by the last request that claimed it: one answered without a record (a status
              // that is not kept releases the key) leaves the key to the next request that sends it.
              if (key !== undefined && (!seen.has(key) || !isKept(seen.get(key)!.response.status)))
                seen.set(key, { adapter, spec, response });
              // A 409 to a request whose first copy the server did get (sent again after a dropped connection):
              // that copy's record is checked by id at the end.
              if (key === undefined && response.status === 409) unansweredById.set(spec.id, spec);
              if (
                key !== undefined &&
                isKept(response.status) &&
                isReplayable(spec) &&
                random() < settings.retryShare
              ) {
                const [again] = await client.exchange([spec]);
                figures[adapter].retries++;
                const replay = checkAnswer(adapter, spec, again!, figures[adapter], note);
                if (replay !== undefined)
                  checkReplay(adapter, spec, response, replay, note, 'immediate retry');
              }
            }
          }
          client.close();
        };
        await Promise.all(Array.from({ length: settings.connections }, worker));
        if (server.exited !== undefined) note(adapter, 'app server crashed', server.exited);
      }),
    );
    clearInterval(progress);
    settings.log(
      `fuzz: ${sent.toLocaleString('en-US')} requests sent; checking every record under ${prefix}`,
    );

    const checked = await checkRecords(
      settings,
      prefix,
      servers,
      { seen, claims, unansweredById, gotById },
      figures,
      note,
    );
    return {
      runId,
      seed: settings.seed,
      requests: sent,
      durationMs: Date.now() - started,
      adapters: figures,
      records: checked.records,
      replaysChecked: checked.replays,
      unansweredRecords: checked.unanswered,
      findings,
    };
  } finally {
    clearInterval(progress);
    for (const server of servers) {
      const exit = await server.stop();
      if (exit !== 0 && server.exited === undefined)
        note(server.adapter, 'app server exited uncleanly', String(exit));
      if (server.exited !== undefined && !findings.some((f) => f.what === 'app server crashed'))
        note(server.adapter, 'app server crashed', server.exited);
    }
    await dropPrefix(settings.redisUrl, prefix);
  }
}

/**
 * A batch made fit to be pipelined, as a client may: every request but the last keeps the connection open
 * (HTTP/1.1, no `Connection: close`: RFC 9112 §9.6 forbids sending more after one), and only the first may carry
 * `Expect: 100-continue`. Node answers a queued request's `Expect` with a `100 Continue` that it writes between the
 * head and the body of that request's response when the body is a Buffer (OutgoingMessage#_send puts the head in
 * front of the queued interim response), with or without oncely; seen on Node 20.20 and 24.21. Sequential
 * requests with `Expect` are sent as generated.
 */
function pipelined(batch: readonly RequestSpec[]): RequestSpec[] {
  return batch.map((spec, index) => {
    if (index === 0 && batch.length === 1) return spec;
    const last = index === batch.length - 1;
    const headers = spec.headers.filter(
      ([name, value]) =>
        !(index > 0 && name.toLowerCase() === 'expect') &&
        !(!last && name.toLowerCase() === 'connection' && /close/i.test(value)),
    );
    const framing = !last && spec.framing === 'http1.0' ? 'length' : spec.framing;
    return { ...spec, headers, framing };
  });
}

/** The policy's answers can be replayed by resending the same bytes: one valid key line, a handled method. */
function isReplayable(spec: RequestSpec): boolean {
  return spec.malformed === undefined && HANDLED.includes(spec.method) && keyLinesOf(spec).length === 1;
}

type Note = (adapter: Adapter, what: string, detail: string, spec?: RequestSpec) => void;

/** The checks every answer to a well-formed request must pass; the response, when there is one. */
function checkAnswer(
  adapter: Adapter,
  spec: RequestSpec,
  result: Exchange,
  figures: AdapterFigures,
  note: Note,
): WireResponse | undefined {
  if (result.kind === 'malformed') {
    note(adapter, 'mis-framed answer', `${result.error}; ${result.trace}`, spec);
    return undefined;
  }
  if (result.kind === 'timeout') {
    note(adapter, 'no answer in time', `${EXCHANGE_TIMEOUT_MS} ms; ${result.trace}`, spec);
    return undefined;
  }
  if (result.kind === 'closed') {
    figures.closedWithoutAnswer++;
    // A server may refuse a body over its limit by closing while the client still sends it (the 413 it wrote
    // first is then lost to the reset): RFC 9112 §9.6 allows it, and nothing was stored.
    if (spec.body.length > MAX_BODY_BYTES) return undefined;
    note(adapter, 'closed without an answer', result.trace, spec);
    return undefined;
  }
  const { response } = result;
  figures.statuses[response.status] = (figures.statuses[response.status] ?? 0) + 1;
  if (response.status >= 500)
    note(adapter, `answered ${response.status}`, response.body.toString('utf8').slice(0, 300), spec);
  return response;
}

function checkReplay(
  adapter: Adapter,
  spec: RequestSpec | undefined,
  original: WireResponse,
  replay: WireResponse,
  note: Note,
  when: string,
): boolean {
  const problems: string[] = [];
  if (replay.status !== original.status) problems.push(`status ${replay.status}, first ${original.status}`);
  if (header(replay, 'idempotent-replayed') !== 'true') problems.push('no Idempotent-Replayed: true');
  if (!replay.body.equals(original.body)) problems.push('body differs');
  for (const name of ['content-type', KEY_HEADER])
    if (header(replay, name) !== header(original, name))
      problems.push(`${name} ${header(replay, name)}, first ${header(original, name)}`);
  if (problems.length > 0) note(adapter, `${when} is not a replay`, problems.join('; '), spec);
  return problems.length === 0;
}

/** A request that is not valid HTTP, on a connection of its own: any answer must parse and none be a 5xx. */
async function sendMalformed(
  port: number,
  spec: RequestSpec,
  fail: (what: string, detail: string) => void,
  figures: AdapterFigures,
): Promise<WireResponse | undefined> {
  const result = await sendAlone(port, spec);
  if (result.kind === 'malformed') fail('mis-framed answer to a malformed request', result.error);
  if (result.kind !== 'response') return undefined;
  figures.statuses[result.response.status] = (figures.statuses[result.response.status] ?? 0) + 1;
  if (result.response.status >= 500)
    fail(`answered ${result.response.status} to a malformed request`, spec.malformed ?? '');
  return result.response;
}

/**
 * Whether a request left without an answer was refused before the server read its body, on a connection the answer
 * closed (Fastify's 415 to a Content-Type it cannot parse, before any hook of the layer runs): the client's next
 * write then meets a closed socket, and the reset it draws can take the answer with it (RFC 9112 §9.6 asks servers
 * to linger; Node does not). Told by sending the same bytes again in one write on a connection of their own: a 4xx
 * that no handler gave (no claim's key on it) and that closes the connection. Anything else stays a finding.
 */
export async function refusedBeforeItsBody(port: number, spec: RequestSpec): Promise<boolean> {
  if (spec.body.length === 0) return false;
  const connection = await open(port);
  const [result] = await connection.exchange(
    [{ pieces: [Buffer.concat(serialize(spec))], head: spec.method === 'HEAD' }],
    EXCHANGE_TIMEOUT_MS,
  );
  connection.close();
  if (result?.kind !== 'response') return false;
  const { response } = result;
  return (
    response.status >= 400 &&
    response.status < 500 &&
    response.closes &&
    header(response, KEY_HEADER) === undefined
  );
}

/**
 * A request on a connection of its own, closed after the first answer: the answer to a bad message, if the server
 * gives one; it may also close at once, or wait for the rest of a message it cannot tell is broken yet (then the
 * connection is dropped here, as a client would).
 */
async function sendAlone(port: number, spec: RequestSpec): Promise<Exchange> {
  const connection = await open(port);
  const [result] = await connection.exchange(
    [{ pieces: serialize(spec), head: spec.method === 'HEAD' }],
    MALFORMED_PATIENCE_MS,
  );
  connection.close();
  return result!;
}

/** Every record under the prefix decodes and is settled; kept answers are stored; completed records replay. */
async function checkRecords(
  settings: FuzzSettings,
  prefix: string,
  servers: readonly RunningServer[],
  known: {
    readonly seen: ReadonlyMap<string, Seen>;
    readonly claims: ReadonlyMap<string, readonly string[]>;
    readonly unansweredById: ReadonlyMap<string, RequestSpec>;
    readonly gotById: ReadonlyMap<string, { spec: RequestSpec; got: string }>;
  },
  figures: Record<Adapter, AdapterFigures>,
  note: Note,
): Promise<{ records: number; replays: number; unanswered: number }> {
  const { seen, claims, unansweredById } = known;
  let unanswered = 0;
  const client = new Redis(settings.redisUrl, { maxRetriesPerRequest: 1 });
  const store = new RedisStore({ client, prefix });
  const ports = new Map(servers.map((server) => [server.adapter, server.port]));
  let records = 0;
  let replays = 0;
  const found = new Set<string>();
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await client.scan(cursor, 'MATCH', store.keys.scanPattern, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    const pending: Array<{ key: string; seenAs: Seen }> = [];
    for (const recordKey of keys) {
      const key = store.keys.keyOf(recordKey);
      if (key === undefined) continue;
      records++;
      found.add(key);
      const seenAs = seen.get(key);
      let record: Awaited<ReturnType<RedisStore['get']>>;
      try {
        record = await store.get(key);
      } catch (error) {
        note(seenAs?.adapter ?? 'node', 'record does not decode', String(error), seenAs?.spec);
        continue;
      }
      if (record === undefined) continue;
      if (seenAs !== undefined) figures[seenAs.adapter].records++;
      if (record.state === 'inProgress')
        note(seenAs?.adapter ?? 'node', 'record left in progress', key, seenAs?.spec);
      if (record.state !== 'completed') continue;
      if (seenAs === undefined) {
        // A request that was not valid HTTP after its first message: the server may drop the connection for the
        // bad bytes before the first message's answer goes out, though its handler ran and stored the outcome. Or
        // a request sent again after its connection dropped, answered 409 while its first copy ran. Its valid part,
        // sent alone, must replay that outcome.
        // The record is the last claim's, but a key released and claimed again (a 429, then a resent copy) has
        // more than one claimer: the one whose answer was lost is the one to replay.
        const claimers = claims.get(key) ?? [];
        const lost = claimers.findLast((id) => unansweredById.has(id));
        const malformed = lost === undefined ? undefined : unansweredById.get(lost);
        const adapter = (claimers[0]?.split('-')[0] ?? 'node') as Adapter;
        if (malformed === undefined) {
          const first = known.gotById.get(claimers[0] ?? '');
          note(
            adapter,
            'completed record no client saw answered',
            `${key} (requests ${claimers.join(', ')}; the first got ${first?.got ?? 'nothing'})`,
            first?.spec,
          );
          continue;
        }
        unanswered++;
        const valid = { ...malformed, malformed: undefined };
        const result = await sendAlone(ports.get(adapter)!, valid);
        const replay = checkAnswer(adapter, valid, result, figures[adapter], note);
        replays++;
        if (replay === undefined) continue;
        if (
          replay.status !== record.outcome?.status ||
          header(replay, 'idempotent-replayed') !== 'true' ||
          header(replay, KEY_HEADER) !== key
        )
          note(
            adapter,
            'the record of an unanswered request is not replayed',
            `${replay.status} ${key}`,
            valid,
          );
        else figures[adapter].replayed++;
        continue;
      }
      if (record.outcome?.status !== seenAs.response.status)
        note(seenAs.adapter, 'record holds another status', `${record.outcome?.status}`, seenAs.spec);
      pending.push({ key, seenAs });
    }
    for (const [key, seenAs] of seen) {
      if (
        isKept(seenAs.response.status) &&
        header(seenAs.response, 'idempotent-replayed') !== 'true' &&
        !found.has(key)
      )
        note(seenAs.adapter, 'a kept answer has no record', `${seenAs.response.status} ${key}`, seenAs.spec);
    }
    // Replay every completed record to the request that created it, a few connections per adapter at once.
    const queues = new Map<Adapter, Array<{ key: string; seenAs: Seen }>>();
    for (const item of pending) {
      const queue = queues.get(item.seenAs.adapter) ?? [];
      queue.push(item);
      queues.set(item.seenAs.adapter, queue);
    }
    await Promise.all(
      [...queues].flatMap(([adapter, queue]) =>
        Array.from({ length: settings.connections }, async () => {
          const client = new KeptAlive(ports.get(adapter)!);
          for (let item = queue.pop(); item !== undefined; item = queue.pop()) {
            const { response } = item.seenAs;
            // A malformed request whose first message was answered: its valid part, since the server's 400 to the
            // broken bytes after it may be written before the replay is.
            const spec = { ...item.seenAs.spec, malformed: undefined };
            const [result] = await client.exchange([spec]);
            const replay = checkAnswer(adapter, spec, result!, figures[adapter], note);
            replays++;
            if (replay !== undefined && checkReplay(adapter, spec, response, replay, note, 'the record'))
              figures[adapter].replayed++;
          }
          client.close();
        }),
      ),
    );
  } finally {
    await store.close();
    client.disconnect();
  }
  return { records, replays, unanswered };
}

/**
 * A client's keep-alive connection. When the server closed a kept-alive connection while the request was on its
 * way (an idle timeout, or a close after an answer such as a 413 that left a body unread), the request went
 * unread, and the client sends it again on a new connection, as HTTP allows; a fresh connection closed unanswered
 * is reported by the caller.
 */
class KeptAlive {
  #connection: Connection | undefined;
  constructor(readonly port: number) {}

  async exchange(specs: readonly RequestSpec[]): Promise<Exchange[]> {
    const requests = specs.map((spec) => ({ pieces: serialize(spec), head: spec.method === 'HEAD' }));
    const reused = this.#connection?.usable === true;
    if (!reused) this.#connection = await open(this.port);
    let results = await this.#connection!.exchange(requests, EXCHANGE_TIMEOUT_MS);
    if (reused && results.every((result) => result.kind === 'closed')) {
      this.#connection = await open(this.port);
      results = await this.#connection.exchange(requests, EXCHANGE_TIMEOUT_MS);
    }
    // Pipelined requests after an answer that closed the connection (`Connection: close`, HTTP/1.0) were never
    // read: they go again on a new connection.
    const cut = results.findIndex(
      (result, index) =>
        result.kind === 'closed' &&
        index > 0 &&
        results[index - 1]?.kind === 'response' &&
        (results[index - 1] as { response: WireResponse }).response.closes,
    );
    if (cut === -1) return results;
    return [...results.slice(0, cut), ...(await this.exchange(specs.slice(cut)))];
  }

  close(): void {
    this.#connection?.close();
  }
}

async function open(port: number): Promise<Connection> {
  const connection = new Connection(port);
  await connection.ready;
  return connection;
}

/** Specs of one adapter, generated lazily in batches (the same seed gives the same requests). */
function* generate(
  arbitrary: fc.Arbitrary<RequestSpec>,
  seed: number,
  count: number,
): Generator<RequestSpec> {
  const BATCH = 500;
  for (let from = 0, batch = 0; from < count; from += BATCH, batch++) {
    yield* fc.sample(arbitrary, { seed: seed + batch, numRuns: Math.min(BATCH, count - from) });
  }
}

/** A small seeded random source for the run's own choices (pipelining, retries). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface RunningServer {
  readonly adapter: Adapter;
  readonly port: number;
  /** Set when the process exited on its own: its exit code or signal and the end of its stderr. */
  readonly exited: string | undefined;
  stop(): Promise<number | null>;
}

async function startServer(config: FuzzServerConfig, claims: Map<string, string[]>): Promise<RunningServer> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', 'proof/fuzz/server.ts', JSON.stringify(config)],
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  let stopping = false;
  let exited: string | undefined;
  const exit = new Promise<number | null>((resolve) => {
    child.once('exit', (code, signal) => {
      if (!stopping) exited = `exit ${code ?? signal}: ${stderr.slice(-1500)}`;
      resolve(code);
    });
  });
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      try {
        const message = JSON.parse(line) as { ready?: number; claim?: string; id?: string };
        if (message.ready !== undefined) resolve(message.ready);
        if (message.claim !== undefined && message.id !== undefined) {
          const claimers = claims.get(message.claim);
          if (claimers === undefined) claims.set(message.claim, [message.id]);
          else claimers.push(message.id);
        }
      } catch {
        // Not a message of ours.
      }
    });
    void exit.then((code) =>
      reject(new Error(`${config.adapter} server exited (${code}) before it was ready: ${stderr}`)),
    );
  });
  return {
    adapter: config.adapter,
    port,
    get exited() {
      return exited;
    },
    stop: async () => {
      if (exited !== undefined) return exit;
      stopping = true;
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      const code = await exit;
      clearTimeout(timer);
      return code;
    },
  };
}

async function dropPrefix(redisUrl: string, prefix: string): Promise<void> {
  const client = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await client.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}

/**
 * The fuzz phase of `npm run proof`: `requests` generated requests (0 skips it), its report written beside the
 * proof's as `<name>.json` and `<name>.md`. Resolves with the number of findings.
 */
export async function fuzzPhase(
  requests: number,
  outDir: string,
  name: string,
  log: (line: string) => void,
): Promise<FuzzReport | undefined> {
  if (requests <= 0) return undefined;
  const report = await runFuzz({
    requests,
    seed: Date.now() % 2 ** 31,
    connections: 8,
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    retryShare: 0.2,
    log,
  });
  writeFileSync(join(outDir, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(outDir, `${name}.md`), fuzzMarkdown(report));
  process.stdout.write(`\n${fuzzMarkdown(report)}\nreport: ${join(outDir, `${name}.json`)} and .md\n`);
  return report;
}

/** The markdown summary of a run, for the proof's report and the console. */
export function fuzzMarkdown(report: FuzzReport): string {
  const lines = [
    `Fuzz \`${report.runId}\` (seed ${report.seed}): ${report.requests.toLocaleString('en-US')} generated requests in ${(report.durationMs / 1000).toFixed(0)} s, ${report.records.toLocaleString('en-US')} records checked, ${report.replaysChecked.toLocaleString('en-US')} replayed (${report.unansweredRecords} of them made by requests whose answer was lost with their connection, replayed to their valid part).`,
    '',
    '| adapter | requests | malformed HTTP | pipelined | immediate retries | records | replayed intact | answers by status |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
  ];
  for (const [adapter, f] of Object.entries(report.adapters)) {
    const statuses = Object.entries(f.statuses)
      .sort(([a], [b]) => Number(a) - Number(b))
      .map(([status, n]) => `${status}: ${n}`)
      .join(', ');
    lines.push(
      `| ${adapter} | ${f.requests.toLocaleString('en-US')} | ${f.malformedSent} | ${f.pipelined} | ${f.retries} | ${f.records} | ${f.replayed} | ${statuses} |`,
    );
  }
  lines.push(
    '',
    report.findings.length === 0 ? '**No finding.**' : `**${report.findings.length} findings:**`,
  );
  for (const finding of report.findings.slice(0, 30))
    lines.push(`- ${finding.adapter}: ${finding.what}: ${finding.detail}`);
  return `${lines.join('\n')}\n`;
}

// Run on its own: node --import tsx proof/fuzz.ts [--requests N] [--seed S] [--connections C]
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '100000' },
      seed: { type: 'string' },
      connections: { type: 'string', default: '8' },
    },
  });
  const report = await runFuzz({
    requests: Number(values.requests),
    seed: values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed),
    connections: Number(values.connections),
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    retryShare: 0.2,
    log: (line) => process.stdout.write(`[fuzz ${new Date().toISOString().slice(11, 19)}] ${line}\n`),
  });
  const out = join(ROOT, '.tmp/proof');
  mkdirSync(out, { recursive: true });
  const file = join(out, `fuzz-${report.runId}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`\n${fuzzMarkdown(report)}\nreport: ${file}\n`);
  process.exit(report.findings.length === 0 ? 0 : 1);
}
