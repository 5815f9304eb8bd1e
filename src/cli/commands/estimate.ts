/**
 * @module `oncely estimate`: how many records a workload keeps and the memory or table space they take, from its
 * request rate, retention and body size.
 */
import { brotliCompressSync, constants } from 'node:zlib';
import { choiceOption, intOption, parseOptions } from '../args.js';
import { UsageError } from '../errors.js';
import { renderTable } from '../table.js';

export const estimateHelp = `oncely estimate --rps 200 [--retention 24h] [--body-bytes 1024] [--store redis|postgres]

  Estimates how many records a workload keeps and how much memory (Redis) or table space (PostgreSQL) they take:
  records = rps × retention; bytes per record = the store's fixed overhead + the body as stored (bodies of 1 KiB
  or more are brotli-compressed; the ratio is measured on a JSON body of the given size).`;

/**
 * Fixed cost of one record beyond its body. Redis: MEMORY USAGE of a completed record (layout 4, one STRING) minus
 * its stored body, with a SHA-256 fingerprint, a content-type header and the label every entry point writes
 * (`POST /payments`): 224, 216.5, 252 and 254 B for a 200 B, 1 KiB, 4 KiB and 10 KiB body (bench/redis/record-size.ts),
 * so their mean, 237 B. Layout 4's 40 bytes fewer than layout 2 show only where they cross one of jemalloc's size
 * classes (without a label, a 200 B body: 160 B instead of 224); elsewhere the classes absorb them. PostgreSQL:
 * table size per row with its indexes, measured in the purge benchmark (about 500 B).
 */
const OVERHEAD_BYTES = { redis: 237, postgres: 500 } as const;

export async function estimate(argv: readonly string[]): Promise<void> {
  const { values } = parseOptions('estimate', argv, {
    rps: { type: 'string' },
    retention: { type: 'string' },
    'body-bytes': { type: 'string' },
    store: { type: 'string' },
  });
  if (values.rps === undefined) throw new UsageError('estimate: --rps is required (new keys per second)');
  const rps = intOption('rps', values.rps, 0, 1, 10_000_000);
  const retentionMs = parseDuration(values.retention ?? '24h');
  const bodyBytes = intOption('body-bytes', values['body-bytes'], 1024, 0, 100 * 1024 * 1024);
  const store = choiceOption('store', values.store, ['redis', 'postgres'] as const, 'redis');
  const storedBody = storedBodyBytes(bodyBytes);
  const perRecord = OVERHEAD_BYTES[store] + storedBody;
  const records = Math.ceil(rps * (retentionMs / 1_000));
  const total = records * perRecord;
  process.stdout.write(
    `${renderTable(
      ['store', 'records kept', 'body stored (bytes)', 'bytes / record', 'total'],
      [[store, records, storedBody, perRecord, formatBytes(total)]],
    )}\n\n` +
      (store === 'redis'
        ? `Give Redis maxmemory of at least ${formatBytes(total * 1.5)} (fragmentation and headroom) with maxmemory-policy\nnoeviction: every oncely key carries a TTL, so volatile-* policies would evict completed records and their\nretries would run again; see docs/stores/redis.md.\n`
        : 'Run `oncely purge` on a schedule so expired rows leave the table; see docs/stores/postgres.md.\n'),
  );
}

/** Bytes a body of `size` takes once stored: brotli at the engine's quality for 1 KiB and above. */
export function storedBodyBytes(size: number): number {
  if (size < 1024) return size;
  const sample = Buffer.from(sampleJson(size));
  const compressed = brotliCompressSync(sample, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } });
  return Math.min(size, compressed.byteLength);
}

/**
 * A JSON body like an API's: repeated field names (which compress well) around ids and numbers that do not, from
 * a fixed-seed generator so the estimate is the same on every run.
 */
function sampleJson(size: number): string {
  let seed = 42;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed;
  };
  const items: string[] = [];
  let length = 2;
  while (length < size) {
    const item = JSON.stringify({
      id: `pay_${random().toString(36)}${random().toString(36)}`,
      amount: random() % 100_000,
      currency: ['EUR', 'USD', 'GBP'][random() % 3],
      customer: `cus_${random().toString(36)}`,
      created: 1_700_000_000 + (random() % 10_000_000),
    });
    items.push(item);
    length += item.length + 1;
  }
  return `[${items.join(',')}]`.slice(0, size);
}

export function parseDuration(text: string): number {
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(text);
  if (match === null) throw new UsageError(`--retention must look like 90s, 30m, 24h or 7d, got "${text}"`);
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[
    match[2] as 'ms' | 's' | 'm' | 'h' | 'd'
  ];
  return Number(match[1]) * unit;
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}
