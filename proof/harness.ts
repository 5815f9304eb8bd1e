// The proof's orchestrator: for each store, start the store behind fault proxies, one app server process per
// adapter (Express, Fastify, Hono, node:http) sharing it, and the client processes; inject the faults of the
// plan as the clients' progress reaches each one; then retry every key once more after the faults, stop
// everything, and hand the ledger, the clients' results and the fault log to the checker.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/redis/support/redis-server.js';
import { services } from '../test/support/services.js';
import { type CheckResult, check, type ProcessRecord } from './check.js';
import { createLedger } from './ledger.js';
import { type BrokerReport, type MessagingSettings, runMessaging } from './messaging/harness.js';
import { type StoreUnderTest, startStore } from './stores.js';
import {
  ADAPTERS,
  type Adapter,
  type ClientConfig,
  type ClientResult,
  type FaultRecord,
  isPostgres,
  isTransactional,
  OUTCOMES,
  type Outcome,
  type ServerConfig,
  type StoreKind,
} from './types.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const here = (file: string) => fileURLToPath(new URL(`./${file}`, import.meta.url));

export type FaultKind =
  | 'server-kill'
  | 'server-stall'
  | 'store-restart'
  | 'script-flush'
  | 'partition'
  | 'latency';

export interface FaultPlan {
  /** Share of the run's requests sent when the fault starts. */
  readonly at: number;
  readonly kind: FaultKind;
  /** How long the fault lasts (partition, latency), or how long a killed process stays down. */
  readonly durationMs?: number;
  /** latency: added per direction. */
  readonly latencyMs?: number;
  /** server-stall: resume the owner as soon as a takeover holds one of its keys (at most lease + duration). */
  readonly resumeOnTakeover?: boolean;
}

export interface ProofSettings {
  readonly profile: string;
  readonly stores: readonly StoreKind[];
  /** Requests per store run (the clients stop starting operations once they sent this many). */
  readonly requests: number;
  /**
   * Per store, a load other than the profile's where that one does not fit. Fewer requests: the ORM and MariaDB
   * phases repeat PostgreSQL's faults through another store, and the full proof keeps near its time. Fewer
   * operations in flight: dynalite, one Node process, carries about 100–200 writes a second on the 2 cores, and
   * beyond that nearly every call times out, outside any fault. `--requests` and `--concurrency` set every store's.
   */
  readonly loads?: Partial<Record<StoreKind, StoreLoad>> | undefined;
  readonly keys: number;
  readonly clients: number;
  /** Operations in flight per client process. */
  readonly concurrency: number;
  readonly window: number;
  readonly leaseMs: number;
  readonly waitMs: number;
  readonly storeTimeoutMs: number;
  readonly handlerMs: number;
  readonly timeoutMs: number;
  readonly lostProbability: number;
  readonly maxOperationMs: number;
  readonly faults: readonly FaultPlan[];
  /** Least time between one fault's end and the next one's start. */
  readonly faultGapMs: number;
  readonly outDir: string;
  /** Keep the ledger schema after the run (for digging). */
  readonly keep: boolean;
  /** Run the stores at the same time (the short profile, to fit in a test's minute) instead of one by one. */
  readonly parallel: boolean;
  /**
   * Pool sizes of each app server on PostgreSQL: its store's pool, and the ledger's. Four servers per store, so a
   * PostgreSQL store run holds up to 4 × (store + ledger) connections: the short profile, which runs two PostgreSQL
   * stores at once inside `npm test`, keeps them small enough for the server's max_connections (100 here).
   */
  readonly connections: { readonly store: number; readonly ledger: number };
  /** The messaging phase (proof/messaging/), after the HTTP stores; none when undefined. */
  readonly messaging: MessagingSettings | undefined;
  readonly log: (line: string) => void;
}

export interface StoreLoad {
  readonly requests?: number | undefined;
  readonly concurrency?: number | undefined;
}

export interface StoreReport {
  readonly kind: StoreKind;
  /** The store's planned requests and operations in flight per client (the profile's, or its `loads` entry). */
  readonly planned: number;
  readonly concurrency: number;
  readonly startedAt: number;
  readonly durationMs: number;
  readonly loadMs: number;
  readonly requests: number;
  readonly finalRequests: number;
  readonly operations: number;
  readonly keys: number;
  readonly servers: ReadonlyArray<{ readonly name: string; readonly adapter: Adapter }>;
  readonly clients: number;
  readonly throughput: number;
  readonly latencyMs: {
    readonly p50: number;
    readonly p90: number;
    readonly p99: number;
    readonly max: number;
  };
  readonly outcomes: Record<Outcome, number>;
  readonly faults: FaultRecord[];
  readonly processes: ProcessRecord[];
  readonly result: CheckResult;
  readonly ledgerSchema: string;
}

interface AppServer {
  readonly name: string;
  readonly adapter: Adapter;
  readonly config: ServerConfig;
  child: ChildProcess;
  status: () => Promise<Claims>;
  record: ProcessRecord;
  /** Set before the harness kills or stops it: any other exit is a crash. */
  expectExit: boolean;
}

export interface Crash {
  readonly server: string;
  readonly pid: number;
  readonly exit: string;
  readonly at: number;
  readonly log: string;
}

/** [storage id, token] of the claims a server is running. */
type Claims = Array<[string, number]>;

const isRunning = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

/** Spawns an app server (its stderr to a log file of its own) and waits until it listens. */
async function spawnServer(
  config: ServerConfig,
  logDir: string,
): Promise<{ child: ChildProcess; pid: number; status: () => Promise<Claims> }> {
  const log = openSync(join(logDir, `server-${config.name}-${Date.now()}.log`), 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', here('server.ts'), JSON.stringify(config)], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', log],
  });
  closeSync(log);
  const lines = createInterface({ input: child.stdout! });
  const waiting: ((line: string) => void)[] = [];
  lines.on('line', (text) => waiting.shift()?.(text));
  const nextLine = () => new Promise<string>((resolve) => waiting.push(resolve));
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${config.name} did not start within 60 s`)), 60_000);
    void nextLine().then((text) => {
      clearTimeout(timer);
      resolve(text);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${config.name} exited with ${code ?? signal} before listening`));
    });
  });
  /** Claims of this process whose handler is between its effect and its answer (none if it does not answer). */
  const status = async (): Promise<Claims> => {
    if (!isRunning(child)) return [];
    const answer = nextLine();
    child.stdin!.write('status\n');
    const text = await Promise.race([answer, sleep(1_000).then(() => undefined)]);
    return text === undefined ? [] : (JSON.parse(text) as { claims: Claims }).claims;
  };
  return { child, pid: (JSON.parse(line) as { pid: number }).pid, status };
}

/**
 * Waits (up to `maxMs`) until the server has at least `wanted` handlers between their effect and their answer,
 * so a kill or a stop lands mid-request; returns how many it had.
 */
async function midRequest(server: AppServer, wanted: number, maxMs: number): Promise<Claims> {
  const until = Date.now() + maxMs;
  let best: Claims = [];
  while (Date.now() < until) {
    const claims = await server.status();
    if (claims.length > best.length) best = claims;
    if (claims.length >= wanted) return claims;
    await sleep(5);
  }
  return best;
}

/** A client process; `stop` tells it to start no new operation (the ones in flight finish). */
function runClient(
  config: ClientConfig,
  onProgress: (sent: number) => void,
): { done: Promise<ClientResult>; stop: () => void } {
  const child = spawn(process.execPath, ['--import', 'tsx', here('client.ts'), JSON.stringify(config)], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  child.on('message', (message: { sent: number }) => onProgress(message.sent));
  const done = new Promise<ClientResult>((resolve, reject) => {
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`client ${config.index} exited with ${code}`));
      resolve(JSON.parse(readFileSync(config.resultFile, 'utf8')) as ClientResult);
    });
  });
  return { done, stop: () => child.connected && child.send('stop') };
}

/** After the last fault, the load goes on this long so its recovery can be seen. */
const TAIL_MS = 3_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(histogram: readonly number[], share: number): number {
  const total = histogram.reduce((sum, n) => sum + n, 0);
  let seen = 0;
  for (let ms = 0; ms < histogram.length; ms++) {
    seen += histogram[ms]!;
    if (seen >= total * share) return ms;
  }
  return histogram.length - 1;
}

/**
 * Recovery after a fault: from the moment it was lifted to the start of the first full second in which the
 * clients met no failure (503, 5xx, timeout, refused or reset connection) and at least one request succeeded.
 */
function recovery(fault: FaultRecord, clients: readonly ClientResult[], until: number): void {
  const BUCKET = 100;
  const epoch = clients[0]!.epoch;
  const length = Math.max(...clients.flatMap((c) => OUTCOMES.map((o) => c.timeline[o].length)));
  const at = (outcome: Outcome, bucket: number) =>
    clients.reduce((sum, c) => sum + (c.timeline[outcome][bucket] ?? 0), 0);
  const failures = (bucket: number) =>
    at('unavailable', bucket) + at('server-error', bucket) + at('timeout', bucket) + at('connection', bucket);
  const from = Math.floor((fault.endedAt - epoch) / BUCKET);
  const last = Math.min(length, Math.ceil((until - epoch) / BUCKET));
  fault.recoveryMs = null;
  for (let bucket = Math.max(0, from); bucket + 10 <= last; bucket++) {
    let clean = true;
    let ok = 0;
    for (let b = bucket; b < bucket + 10 && clean; b++) {
      if (failures(b) > 0) clean = false;
      ok += at('ok', b);
    }
    if (clean && ok > 0) {
      fault.recoveryMs = Math.max(0, epoch + bucket * BUCKET - fault.endedAt);
      break;
    }
  }
  const start = Math.floor((fault.startedAt - epoch) / BUCKET);
  const end =
    fault.recoveryMs === null ? last : Math.floor((fault.endedAt + fault.recoveryMs - epoch) / BUCKET);
  let during = 0;
  for (let bucket = Math.max(0, start); bucket < end; bucket++) during += failures(bucket);
  fault.failuresDuring = during;
}

export async function runStore(
  kind: StoreKind,
  settings: ProofSettings,
  runId: string,
): Promise<StoreReport> {
  const { log } = settings;
  const startedAt = Date.now();
  const schema = `oncely_proof_${runId}_${kind.replace('-', '_')}`;
  const applicationName = `${schema}-app`;
  const postgresStore = isPostgres(kind);
  const ledger = await createLedger(services.postgres.url, schema, {
    postgresStoreTable: postgresStore,
    mysqlPayments: kind === 'mysql-tx' ? services.mariadb.url : undefined,
  });
  let store: StoreUnderTest | undefined;
  const servers: AppServer[] = [];
  const processes: ProcessRecord[] = [];
  const outDir = join(settings.outDir, `${runId}-${kind}`);
  mkdirSync(outDir, { recursive: true });
  const crashes: Crash[] = [];
  let stopping = false;
  /** An app server that exits on its own crashed: recorded (a violation), its log kept, and restarted. */
  function watch(server: AppServer): void {
    const { child, record } = server;
    child.once('exit', (code, signal) => {
      if (server.expectExit || stopping) return;
      record.endedAt = Date.now();
      record.killed = true;
      crashes.push({
        server: server.name,
        pid: record.pid,
        exit: String(code ?? signal),
        at: Date.now(),
        log: outDir,
      });
      log(
        `${kind}: app server ${server.name} (pid ${record.pid}) CRASHED (${code ?? signal}); restarting it`,
      );
      void spawnServer(server.config, outDir).then(
        (restarted) => {
          server.child = restarted.child;
          server.status = restarted.status;
          server.record = {
            pid: restarted.pid,
            server: server.name,
            startedAt: Date.now(),
            endedAt: null,
            killed: false,
          };
          processes.push(server.record);
          watch(server);
        },
        (error: unknown) => log(`${kind}: restarting ${server.name} failed: ${error}`),
      );
    });
  }
  try {
    store = await startStore(
      kind,
      { url: services.postgres.url, schema, applicationName },
      `proof-${runId}`,
      {
        mysqlUrl: services.mariadb.url,
        keep: settings.keep,
      },
    );
    const ports = await Promise.all(ADAPTERS.map(() => freePort()));
    const configs = ADAPTERS.map(
      (adapter, index): ServerConfig => ({
        name: adapter,
        adapter,
        port: ports[index]!,
        store: store!.connection,
        prefix: `proof-${runId}`,
        ledger: { url: services.postgres.url, schema, applicationName: `${schema}-ledger` },
        leaseMs: settings.leaseMs,
        waitMs: settings.waitMs,
        storeTimeoutMs: settings.storeTimeoutMs,
        handlerMs: settings.handlerMs,
        connections: settings.connections,
      }),
    );
    const started = await Promise.all(configs.map((config) => spawnServer(config, outDir)));
    started.forEach(({ child, pid, status }, index) => {
      const config = configs[index]!;
      const record: ProcessRecord = {
        pid,
        server: config.name,
        startedAt: Date.now(),
        endedAt: null,
        killed: false,
      };
      processes.push(record);
      const server: AppServer = {
        name: config.name,
        adapter: config.adapter,
        config,
        child,
        status,
        record,
        expectExit: false,
      };
      servers.push(server);
      watch(server);
    });
    log(
      `${kind}: store up, ${servers.length} app servers (${servers.map((s) => `${s.name} pid ${s.record.pid}`).join(', ')})`,
    );

    const serverUrls = configs.map((config) => ({
      name: config.name,
      url: `http://127.0.0.1:${config.port}`,
    }));
    const epoch = Date.now();
    const keyPrefix = `k${runId}`;
    const sentBy = new Array<number>(settings.clients).fill(0);
    const planned = settings.loads?.[kind]?.requests ?? settings.requests;
    const concurrency = settings.loads?.[kind]?.concurrency ?? settings.concurrency;
    const progress = () => sentBy.reduce((sum, n) => sum + n, 0) / planned;
    const loadStarted = Date.now();
    // The load runs until it sent its requests AND every fault of the plan was injected and lifted (plus a
    // tail to see the last one recover): the faults are triggered by progress, and a fault that takes longer
    // than the load it was aimed at must not be skipped.
    const clientRuns = Array.from({ length: settings.clients }, (_, index) =>
      runClient(
        {
          index,
          mode: 'load',
          epoch,
          servers: serverUrls,
          keyPrefix,
          keys: settings.keys,
          requests: Math.ceil(planned / settings.clients),
          concurrency,
          window: settings.window,
          timeoutMs: settings.timeoutMs,
          lostProbability: settings.lostProbability,
          maxOperationMs: settings.maxOperationMs,
          resultFile: join(outDir, `client-${index}.json`),
          seed: Number.parseInt(runId, 16) + index,
        },
        (sent) => {
          sentBy[index] = sent;
        },
      ),
    );
    const clients = Promise.all(clientRuns.map((run) => run.done));

    // The fault schedule, driven by progress.
    const faults: FaultRecord[] = [];
    let victim = 0;
    const plan = settings.faults.filter(
      (fault) => fault.kind !== 'script-flush' || store!.scriptFlush !== undefined,
    );
    const injector = (async () => {
      let lifted = 0;
      for (const planned of plan) {
        // Faults are spaced: each one's consequences (orphaned claims, late commands) play out before the next.
        while (progress() < planned.at || Date.now() < lifted + settings.faultGapMs) await sleep(50);
        const record = await inject(planned, progress(), settings.faults.indexOf(planned));
        lifted = record.endedAt;
        faults.push(record);
        log(
          `${kind}: ${record.name} at ${(record.at * 100).toFixed(0)}%: ${record.detail} (${record.endedAt - record.startedAt} ms)`,
        );
      }
      while (progress() < 1) await sleep(50);
      await sleep(TAIL_MS);
      for (const run of clientRuns) run.stop();
    })();

    async function inject(planned: FaultPlan, at: number, step: number): Promise<FaultRecord> {
      const startedAt = Date.now();
      const base = {
        step,
        at,
        startedAt,
        endedAt: startedAt,
        killedPids: [] as number[],
        stalledPids: [] as number[],
      };
      const duration = planned.durationMs ?? 1_000;
      switch (planned.kind) {
        case 'server-kill': {
          const server = servers[victim++ % servers.length]!;
          const pid = server.record.pid;
          const inflight = (await midRequest(server, 1, 5_000)).length;
          base.startedAt = Date.now();
          server.expectExit = true;
          const exited = isRunning(server.child)
            ? new Promise((resolve) => server.child.once('exit', resolve))
            : Promise.resolve();
          server.child.kill('SIGKILL');
          await exited;
          server.record.endedAt = Date.now();
          server.record.killed = true;
          await sleep(duration);
          const restarted = await spawnServer(server.config, outDir);
          server.child = restarted.child;
          server.status = restarted.status;
          server.expectExit = false;
          server.record = {
            pid: restarted.pid,
            server: server.name,
            startedAt: Date.now(),
            endedAt: null,
            killed: false,
          };
          processes.push(server.record);
          watch(server);
          return {
            ...base,
            name: 'SIGKILL app server',
            kind: 'server-kill',
            detail: `${server.name} (pid ${pid}) killed with ${inflight} handler(s) between effect and answer, restarted ${duration} ms later as pid ${restarted.pid}`,
            endedAt: Date.now(),
            killedPids: [pid],
            storeFault: false,
          };
        }
        case 'server-stall': {
          const server = servers[victim++ % servers.length]!;
          const pid = server.record.pid;
          const claims = await midRequest(server, 1, 5_000);
          base.startedAt = Date.now();
          server.child.kill('SIGSTOP');
          // Past the lease, resume as soon as another claim holds one of the stopped owner's keys (its stale
          // complete then races a claim in progress), or at lease + duration.
          let resumedOn = '';
          let lastSeen = '';
          await sleep(settings.leaseMs);
          while (planned.resumeOnTakeover && Date.now() < base.startedAt + settings.leaseMs + duration) {
            for (const [id, token] of claims) {
              const record = await store!.peek(id).catch((error: unknown) => {
                lastSeen = String(error);
                return undefined;
              });
              if (record !== undefined)
                lastSeen = `${record.state} ${record.token} (stopped owner's ${token})`;
              if (record !== undefined && record.token > token && record.state === 'inProgress')
                resumedOn = `, resumed as soon as a takeover (token ${record.token} > ${token}) held one of its keys`;
            }
            if (resumedOn !== '') break;
            await sleep(2);
          }
          if (resumedOn === '') {
            await sleep(base.startedAt + settings.leaseMs + duration - Date.now());
            if (planned.resumeOnTakeover)
              resumedOn = isTransactional(kind)
                ? ' (no takeover can happen: the open transaction holds the key)'
                : `, no takeover seen in progress (last: ${lastSeen})`;
          }
          server.child.kill('SIGCONT');
          const stopped = Date.now() - base.startedAt;
          return {
            ...base,
            name: 'SIGSTOP owner past its lease',
            kind: 'server-stall',
            detail: `${server.name} (pid ${pid}) stopped with ${claims.length} handler(s) between effect and answer, for ${stopped} ms (lease ${settings.leaseMs} ms), then SIGCONT${resumedOn}`,
            endedAt: Date.now(),
            stalledPids: [pid],
            storeFault: false,
          };
        }
        case 'store-restart': {
          const detail = await store!.restart(duration);
          return {
            ...base,
            name:
              store!.restartLabel?.name ??
              (postgresStore ? 'terminate store connections' : 'store SIGKILL + restart'),
            kind: store!.restartLabel?.kind ?? (postgresStore ? 'backend-terminate' : 'store-restart'),
            detail,
            endedAt: Date.now(),
            storeFault: true,
          };
        }
        case 'script-flush': {
          const detail = await store!.scriptFlush!();
          return {
            ...base,
            name: 'SCRIPT FLUSH',
            kind: 'script-flush',
            detail,
            endedAt: Date.now(),
            storeFault: true,
          };
        }
        case 'partition': {
          for (const proxy of store!.proxies) proxy.partition();
          await sleep(duration);
          for (const proxy of store!.proxies) proxy.heal();
          return {
            ...base,
            name: 'network partition',
            kind: 'partition',
            detail: `every app↔store connection silent for ${duration} ms (bytes held, delivered late on heal)`,
            endedAt: Date.now(),
            storeFault: true,
          };
        }
        case 'latency': {
          const latency = planned.latencyMs ?? 100;
          for (const proxy of store!.proxies) proxy.setLatency(latency);
          await sleep(duration);
          for (const proxy of store!.proxies) proxy.setLatency(0);
          return {
            ...base,
            name: 'network latency',
            kind: 'latency',
            detail: `+${latency} ms each way on every app↔store connection for ${duration} ms (store timeout ${settings.storeTimeoutMs} ms)`,
            endedAt: Date.now(),
            storeFault: true,
          };
        }
      }
    }

    const results = await clients;
    const loadMs = Date.now() - loadStarted;
    await injector;
    log(
      `${kind}: load done in ${(loadMs / 1000).toFixed(1)} s, ${results.reduce((s, r) => s + r.requests, 0)} requests; late retry of every key`,
    );

    // Let claims orphaned by the faults run out their lease, then retry every key once, as a late client would.
    await sleep(settings.leaseMs + 500);
    const keysUsed =
      1 +
      Math.max(
        0,
        ...results.flatMap((r) =>
          Object.keys(r.keys).map((key) => Number(key.slice(key.lastIndexOf('-') + 1))),
        ),
      );
    const final = await runClient(
      {
        index: settings.clients,
        mode: 'final',
        epoch,
        servers: serverUrls,
        keyPrefix,
        keys: keysUsed,
        requests: keysUsed,
        concurrency: 16,
        window: 0,
        timeoutMs: settings.timeoutMs,
        lostProbability: 0,
        maxOperationMs: settings.maxOperationMs,
        resultFile: join(outDir, 'final.json'),
        seed: 1,
      },
      () => {},
    ).done;
    // Stop the servers gracefully: each flushes its event log first.
    stopping = true;
    await Promise.all(
      servers.map(async (server) => {
        const exited = isRunning(server.child)
          ? new Promise((resolve) => server.child.once('exit', resolve))
          : Promise.resolve();
        server.child.stdin?.end();
        await Promise.race([exited, sleep(10_000)]);
        server.child.kill('SIGKILL');
        server.record.endedAt = Date.now();
      }),
    );
    const ledgerRows = await ledger.read();
    const endedAt = Date.now();
    for (const fault of faults) recovery(fault, results, endedAt);
    const result = check({
      kind,
      ...ledgerRows,
      clients: results,
      final,
      faults,
      processes,
      crashes,
      leaseMs: settings.leaseMs,
      storeTimeoutMs: settings.storeTimeoutMs,
    });
    const latency = new Array<number>(results[0]!.latency.length).fill(0);
    const outcomes = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
    for (const r of results) {
      r.latency.forEach((n, ms) => {
        latency[ms]! += n;
      });
      for (const o of OUTCOMES) outcomes[o] += r.outcomes[o];
    }
    const requests = results.reduce((sum, r) => sum + r.requests, 0);
    return {
      kind,
      planned,
      concurrency,
      startedAt,
      durationMs: endedAt - startedAt,
      loadMs,
      requests,
      finalRequests: final.requests,
      operations: results.reduce((sum, r) => sum + r.operations, 0),
      keys: keysUsed,
      servers: servers.map((s) => ({ name: s.name, adapter: s.adapter })),
      clients: settings.clients,
      throughput: Math.round(requests / (loadMs / 1000)),
      latencyMs: {
        p50: percentile(latency, 0.5),
        p90: percentile(latency, 0.9),
        p99: percentile(latency, 0.99),
        max: percentile(latency, 1),
      },
      outcomes,
      faults,
      processes,
      result,
      ledgerSchema: schema,
    };
  } finally {
    stopping = true;
    for (const server of servers) {
      server.child.kill('SIGCONT');
      server.child.kill('SIGKILL');
    }
    await store?.close().catch(() => {});
    if (settings.keep) await ledger.end();
    else await ledger.drop().catch(() => {});
  }
}

export interface ProofReport {
  readonly profile: string;
  readonly runId: string;
  readonly startedAt: string;
  readonly durationMs: number;
  readonly machine: {
    readonly cpus: number;
    readonly cpuModel: string;
    readonly memoryGiB: number;
    readonly node: string;
    readonly loadAverage: number[];
  };
  readonly settings: Omit<ProofSettings, 'log' | 'outDir'>;
  readonly stores: StoreReport[];
  readonly messaging: BrokerReport[];
  readonly violations: number;
}

export async function runProof(settings: ProofSettings): Promise<ProofReport> {
  const os = await import('node:os');
  const runId = randomBytes(3).toString('hex');
  const started = Date.now();
  const loadAverage = os.loadavg();
  const stores: StoreReport[] = [];
  if (settings.parallel)
    stores.push(...(await Promise.all(settings.stores.map((kind) => runStore(kind, settings, runId)))));
  else for (const kind of settings.stores) stores.push(await runStore(kind, settings, runId));
  const messaging =
    settings.messaging === undefined || settings.messaging.brokers.length === 0
      ? []
      : await runMessaging(settings.messaging, {
          runId,
          outDir: settings.outDir,
          keep: settings.keep,
          log: settings.log,
        });
  const { log: _log, outDir: _outDir, ...rest } = settings;
  return {
    profile: settings.profile,
    runId,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
      loadAverage: loadAverage.map((n) => Math.round(n * 100) / 100),
    },
    settings: rest,
    stores,
    messaging,
    violations:
      stores.reduce((sum, s) => sum + s.result.violations, 0) +
      messaging.reduce((sum, b) => sum + b.result.violations, 0),
  };
}
