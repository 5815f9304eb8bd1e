/**
 * @module The DynamoDB benchmark: what each kind of request costs on DynamoDbStore in API calls and in consumed
 * capacity (what AWS bills), on dynalite started in this process on a free port, through `idempotent()` on a store
 * made as docs/stores/dynamodb.md makes it. Nothing is timed: dynalite is a JavaScript emulator on LevelDB, and its
 * speed says nothing of DynamoDB's. Writes the `dynamodb` section of docs/benchmarks.md. Run it alone:
 *   flock /tmp/oncely-bench.lock node --import tsx bench/dynamodb/run.ts [--quick]
 */
import { DynamoDbStore } from '../../src/stores/dynamodb/index.js';
import { returnItemOnRefusal, startDynalite } from '../../test/dynamodb/support/dynalite.js';
import { versionOf } from '../orm/fixtures.js';
import { writeSection } from '../write-section.mjs';
import { type Call, meterCapacity } from './capacity.js';
import { capacityTable, environment, fallbackTable, type KindReport, REPRODUCE } from './report.js';
import { type RequestKind, requestKinds, storedItemBytes, totals } from './requests.js';

const quick = process.argv.includes('--quick');
const RUNS = quick ? 2 : 10;
const TABLE = 'oncely_keys';

const backend = await startDynalite(TABLE);
try {
  // As the store's page makes it (a request timeout that throws), pointed at dynalite.
  const client = backend.newClient({
    requestHandler: { requestTimeout: 1_000, throwOnRequestTimeout: true },
  });
  let active: Call[] | undefined;
  meterCapacity(client, () => active);
  const store = new DynamoDbStore({ client, table: TABLE });

  /** Every kind, RUNS times on fresh keys of `run`, its calls metered. */
  const measure = async (run: string): Promise<KindReport[]> => {
    const reports: KindReport[] = [];
    for (const kind of requestKinds(store, run)) reports.push(await measureKind(kind));
    return reports;
  };
  const measureKind = async (kind: RequestKind): Promise<KindReport> => {
    const runs: ReturnType<typeof totals>[] = [];
    const after: number[] = [];
    let calls = 0;
    for (let n = 0; n < RUNS; n++) {
      const log: Call[] = [];
      await kind.run(async (work) => {
        active = log;
        try {
          return await work();
        } finally {
          active = undefined;
        }
      }, n);
      runs.push(totals(log));
      calls += log.length;
      const size = await storedItemBytes(backend.client, TABLE, kind.key(n));
      if (size !== undefined) after.push(size);
    }
    const mean = (of: (t: ReturnType<typeof totals>) => number) =>
      runs.reduce((sum, t) => sum + of(t), 0) / runs.length;
    const met = runs.flatMap((t) => (t.metBytes === undefined ? [] : [t.metBytes]));
    const average = (values: number[]) =>
      values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0) / values.length;
    const report: KindReport = {
      name: kind.name,
      sequences: [...new Set(runs.map((t) => t.sequence))],
      calls: calls / RUNS,
      wcu: mean((t) => t.wcu),
      computedWcu: mean((t) => t.computedWcu),
      rcu: mean((t) => t.rcu),
      metBytes: average(met),
      afterBytes: average(after),
    };
    console.log(
      `${kind.name}: ${report.sequences.join(' / ')}; ${report.wcu} WCU (${report.computedWcu} computed), ${report.rcu} RCU`,
    );
    return report;
  };

  // As DynamoDB answers: a refused write carries the item it found.
  returnItemOnRefusal(true);
  const onDynamo = await measure('with-item');
  // As dynalite 4.0 ships (and other emulators without ReturnValuesOnConditionCheckFailure): the store reads.
  returnItemOnRefusal(false);
  const onEmulator = await measure('without-item');

  const versions = [
    `dynalite ${versionOf('dynalite')}`,
    `@aws-sdk/client-dynamodb ${versionOf('@aws-sdk/client-dynamodb')}`,
  ];
  const markdown = [
    '## DynamoDB store: calls and capacity per request',
    '',
    environment(versions, RUNS),
    '',
    'What a request costs on `DynamoDbStore` is what AWS bills: capacity units. Every request here goes through',
    '`idempotent()` on `new DynamoDbStore({ client, table })`, with every item call of the client asking for',
    "`ReturnConsumedCapacity: 'TOTAL'` (a middleware on the client’s stack, which also counts the calls). A",
    'refused conditional write answers with `ConditionalCheckFailedException`, which has no `ConsumedCapacity` on',
    'DynamoDB either; DynamoDB bills it by the size of the item it found, per 1 KB, at least 1 unit, and that is',
    'what the refused writes are counted at here, from the item the refusal returns, with the store’s own',
    'item-size count (AWS’s rules). The other units are as dynalite reports them: the larger of the item before',
    'and after, per 1 KB, for a write; per 4 KB for a consistent read. On-demand, each write unit is a write',
    'request unit (WRU) and each read unit a read request unit (RRU); provisioned tables consume the same units.',
    '',
    '**No throughput or latency is claimed for DynamoDB**: dynalite is a JavaScript emulator of the API on LevelDB',
    '(in memory here, in the same process as the client), so its speed tells nothing of the service’s (a network',
    'call to partitioned, replicated storage). Not seen on dynalite either: throttling, and the refusal carrying',
    'the item (dynalite 4.0 predates `ReturnValuesOnConditionCheckFailure`; the first table teaches it what',
    'DynamoDB does, as the store’s tests do).',
    '',
    '### As DynamoDB answers (the refusal carries the item)',
    '',
    capacityTable(onDynamo),
    '',
    'A replay is billed as a write of the record it returns, and a mismatch or an in-progress duplicate as a write',
    'of the item it meets: cheap while records are small, one unit per KB of stored answer once they are not.',
    'Lease renewals, which only a handler running past a third of `leaseMs` sends, are one `UpdateItem` of the',
    'claim’s item each (1 unit for an item under 1 KB), and are not part of these requests.',
    '',
    '### On an emulator that refuses without the item',
    '',
    'dynalite as it ships, and older DynamoDB Local and LocalStack releases: the store reads the item once with a',
    'consistent `GetItem` after a refusal. The writes are billed as above; the extra reads:',
    '',
    fallbackTable(onEmulator),
  ].join('\n');
  console.log(`\n${markdown}\n`);
  if (quick) {
    console.log(`--quick: docs/benchmarks.md left as it is (run \`${REPRODUCE}\` for the real table)`);
  } else {
    writeSection('dynamodb', markdown);
    console.log('docs/benchmarks.md: section dynamodb written');
  }
} finally {
  await backend.close();
}
