// `npm run proof`: exactly-once over HTTP at scale under injected faults, on every store. Exits non-zero on any
// violation. Writes the JSON report and a markdown summary (the full profile to proof/results/, which
// docs/guarantees.md quotes; other profiles to .tmp/proof/).
//
//   npm run proof                               the full run (sizes below), about 20 minutes on 2 cores
//   npm run proof -- --profile short            the small run that `npm test` also runs (test/proof/)
//   npm run proof -- --stores redis,postgres-tx --requests 20000 --keys 500 --keep
//   npm run proof -- --stores postgres-tx,postgres-kysely,postgres-drizzle,postgres-prisma --brokers none --fuzz 0
//                                              transactional mode on pg and through each ORM (proof/orm-stores.ts)
//   npm run proof -- --stores mysql,mysql-tx,dynamodb --requests 2000 --keys 300 --fuzz 0 --brokers none
//                                              MariaDB plain and transactional (proof/mysql.ts), DynamoDB on dynalite
//                                              (proof/dynamodb.ts: its own load, 4 in flight per client, unless --concurrency)
//   npm run proof -- --faults server-stall,partition      only these faults of the plan (--no-faults: none)
//   npm run proof -- --fuzz 20000              requests of the fuzz phase (proof/fuzz.ts; full 100,000, else 2,000; 0 skips)
//   npm run proof -- --stores none --brokers nats --events 20000     the messaging phase alone, on one broker
//   npm run proof -- --brokers none                                     the HTTP phase alone
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { fuzzPhase } from './fuzz.js';
import { type ProofSettings, runProof } from './harness.js';
import { BROKER_KINDS, type BrokerKind } from './messaging/types.js';
import { MESSAGING_SHORT, PROFILES } from './profiles.js';
import { guaranteesSection, markdown } from './report.js';
import { STORE_KINDS, type StoreKind } from './types.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: {
    profile: { type: 'string', default: 'full' },
    stores: { type: 'string' },
    requests: { type: 'string' },
    keys: { type: 'string' },
    out: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'no-faults': { type: 'boolean', default: false },
    faults: { type: 'string' },
    concurrency: { type: 'string' },
    'handler-ms': { type: 'string' },
    fuzz: { type: 'string' },
    brokers: { type: 'string' },
    events: { type: 'string' },
    'message-faults': { type: 'string' },
  },
});
const profile = PROFILES[values.profile as keyof typeof PROFILES];
if (profile === undefined) {
  process.stderr.write(`unknown profile ${values.profile}: ${Object.keys(PROFILES).join(', ')}\n`);
  process.exit(2);
}
const list = (value: string | undefined) => (value === 'none' ? [] : value?.split(','));
const stores = (list(values.stores) ?? profile.stores) as StoreKind[];
for (const store of stores)
  if (!STORE_KINDS.includes(store)) throw new Error(`unknown store ${store}: ${STORE_KINDS.join(', ')}`);
// The short profile's messaging phase is the one `npm test` runs on its own (test/proof/messaging.test.ts).
const messaging = profile.messaging ?? (values.brokers === undefined ? undefined : MESSAGING_SHORT);
const brokers = (list(values.brokers) ?? messaging?.brokers ?? []) as BrokerKind[];
for (const broker of brokers)
  if (!BROKER_KINDS.includes(broker)) throw new Error(`unknown broker ${broker}: ${BROKER_KINDS.join(', ')}`);
const custom =
  values.stores !== undefined ||
  values.requests !== undefined ||
  values.keys !== undefined ||
  values.concurrency !== undefined ||
  values['handler-ms'] !== undefined ||
  values['no-faults'] ||
  values.faults !== undefined ||
  values.brokers !== undefined ||
  values.events !== undefined ||
  values['message-faults'] !== undefined;
const outDir =
  values.out ??
  (values.profile === 'full' && !custom ? join(ROOT, 'proof/results') : join(ROOT, '.tmp/proof'));
mkdirSync(outDir, { recursive: true });
const settings: ProofSettings = {
  ...profile,
  profile: custom ? `${values.profile} (custom)` : values.profile!,
  stores,
  requests: values.requests === undefined ? profile.requests : Number(values.requests),
  // `--requests` and `--concurrency` set every store's load, those with a load of their own too.
  loads: Object.fromEntries(
    Object.entries(profile.loads ?? {}).map(([kind, load]) => [
      kind,
      {
        ...(values.requests === undefined ? { requests: load.requests } : {}),
        ...(values.concurrency === undefined ? { concurrency: load.concurrency } : {}),
      },
    ]),
  ),
  keys: values.keys === undefined ? profile.keys : Number(values.keys),
  concurrency: values.concurrency === undefined ? profile.concurrency : Number(values.concurrency),
  handlerMs: values['handler-ms'] === undefined ? profile.handlerMs : Number(values['handler-ms']),
  faults: values['no-faults']
    ? []
    : profile.faults.filter(
        (fault) => values.faults === undefined || values.faults.split(',').includes(fault.kind),
      ),
  messaging:
    messaging === undefined
      ? undefined
      : {
          ...messaging,
          brokers,
          events: values.events === undefined ? messaging.events : Number(values.events),
          faults: values['no-faults']
            ? []
            : messaging.faults.filter(
                (fault) =>
                  values['message-faults'] === undefined ||
                  values['message-faults'].split(',').includes(fault.kind),
              ),
        },
  outDir: join(ROOT, '.tmp/proof/runs'),
  keep: values.keep,
  log: (line) => process.stdout.write(`[proof ${new Date().toISOString().slice(11, 19)}] ${line}\n`),
};

const report = await runProof(settings);
const name = values.profile === 'full' && !custom ? 'full' : `${values.profile}-${report.runId}`;
writeFileSync(join(outDir, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(join(outDir, `${name}.md`), markdown(report));
process.stdout.write(`\n${markdown(report)}\nreport: ${join(outDir, `${name}.json`)} and .md\n`);
const fuzzRequests = Number(values.fuzz ?? (values.profile === 'full' ? 100_000 : 2_000));
const fuzz = await fuzzPhase(fuzzRequests, outDir, `${name}-fuzz`, settings.log);
const findings = fuzz?.findings.length ?? 0;
if (name === 'full') {
  // The full run is what docs/guarantees.md quotes: its "last proof run" section is rewritten, fuzz phase included.
  const doc = join(ROOT, 'docs/guarantees.md');
  const text = readFileSync(doc, 'utf8');
  const start = '<!-- proof:last-run:start -->';
  const end = '<!-- proof:last-run:end -->';
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  const fuzzLine =
    fuzz === undefined
      ? 'The fuzz phase did not run.'
      : `Fuzz phase: ${fuzz.requests.toLocaleString('en-US')} generated requests (keys, headers, framing, bodies, methods) across the four adapters in ${(fuzz.durationMs / 1000).toFixed(0)} s, ${fuzz.records.toLocaleString('en-US')} records checked, ${fuzz.replaysChecked.toLocaleString('en-US')} replayed: **${findings === 0 ? 'no finding' : `${findings} findings`}** ([proof/results/full-fuzz.md](https://github.com/oncely/oncely/blob/main/proof/results/full-fuzz.md)).`;
  if (from !== -1 && to !== -1)
    writeFileSync(
      doc,
      // performance.now(): this process's whole run so far, the fuzz phase included.
      `${text.slice(0, from + start.length)}\n${guaranteesSection(report, performance.now())}\n\n${fuzzLine}\n${text.slice(to)}`,
    );
}
process.exit(report.violations === 0 && findings === 0 ? 0 : 1);
