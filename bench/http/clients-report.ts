// The `http-clients` section of docs/benchmarks.md: Express with oncely on a RedisStore over each client library
// the store takes, beside bare Express, with the Redis commands each request cost.
import type { ClientName } from '../../test/redis/support/clients.js';
import { fixed, type RunInfo, signed, stormCell } from './report.js';
import type { Summary } from './summary.js';

export interface ClientRow {
  readonly client: ClientName;
  readonly summary: Summary;
  /** Redis commands per request of the layer's side: commandstats calls over all B rounds / the requests sent. */
  readonly commands: Readonly<Record<string, number>>;
}

const SCRIPTS = new Set(['evalsha', 'eval', 'evalsha_ro', 'eval_ro', 'fcall', 'fcall_ro']);
const LIBRARY: Record<ClientName, string> = {
  ioredis: 'ioredis',
  iovalkey: 'iovalkey',
  'node-redis': 'node-redis (`redis`)',
  glide: 'Valkey GLIDE',
};

/** Commands per request as "total: name n, …", the names with at least 0.01 per request, most first. */
function commandCell(commands: Readonly<Record<string, number>>, scripts: boolean): string {
  const entries = Object.entries(commands).filter(([name]) => SCRIPTS.has(name.split('|')[0]!) === scripts);
  const total = entries.reduce((sum, [, n]) => sum + n, 0);
  const named = entries
    .filter(([, n]) => n >= 0.005)
    .sort(([x, m], [y, n]) => n - m || x.localeCompare(y))
    .map(([name, n]) => `${name} ${n.toFixed(2)}`)
    .join(', ');
  return `${scripts ? `**${total.toFixed(2)}**` : total.toFixed(2)}${named === '' ? '' : `: ${named}`}`;
}

export function clientsReport(rows: readonly ClientRow[], info: RunInfo): string {
  const lines = rows.map(({ client, summary: s, commands }) => {
    return `| ${LIBRARY[client]} | ${s.workload} | ${fixed(s.baselineRps)} | ${fixed(s.layerRps)} | **${s.ratio.toFixed(2)}×** | ${s.ratioMin.toFixed(2)}–${s.ratioMax.toFixed(2)} | ${signed(s.serverCpuAddedUs)} | ${signed(s.redisCpuAddedUs)} | ${commandCell(commands, true)} | ${commandCell(commands, false)} | ${s.failures} | ${stormCell(s)} |`;
  });
  return `
### HTTP on each Redis client

_Measured ${info.date} with \`${info.command}\`. ${info.machine}. ${info.versions}._

Express 5 with oncely on a \`RedisStore\` (B) against the same bare Express (A), as in the HTTP table above, once
for each client library the store takes, each made as [its page](stores/redis.md#clients) recommends (ioredis and
iovalkey: \`enableOfflineQueue: false\`, \`maxRetriesPerRequest: 0\`; node-redis: \`disableOfflineQueue: true\`;
GLIDE: \`requestTimeout: 1000\` and a second client as \`subscriber\` for \`waitFor\`), the store's pipelining on (its
default). The store has a connection of its own in every row, and the handler's effect (one \`INCR\`) stays on an
ioredis client, so only the store's client changes; the ioredis row is therefore not the \`oncely\` row above, where
the store and the handler share one client. The method is the HTTP table's: autocannon on 127.0.0.1, ${50}
connections, ${info.roundSeconds} s per round, ${info.pairs} A/B pairs per row in alternating order, servers in their
own processes, a disposable \`redis-server\`, emptied before each client's rows. **Scripts / req** and **other
commands / req**: \`INFO commandstats\` over the B rounds, divided by the requests they sent (each round read once
Redis has gone quiet, so the requests in flight when it ended count in it). Commandstats also counts the calls a
script makes inside it (\`get\`, \`set\`, \`pttl\`, \`time\`) and the handler's \`INCR\` (one per new
request), so the other commands are the same for every client unless a client sends commands of its own; an \`eval\`
is a script sent whole after a NOSCRIPT. CPU added, failures and storm (100 concurrent identical requests for each
of 20 keys) as in the HTTP table.

| client | workload | A req/s | B req/s | B/A | spread | server CPU µs/req | Redis CPU µs/req | scripts / req | other commands / req | failures | storm (20 keys × 100) |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${lines.join('\n')}
`;
}
