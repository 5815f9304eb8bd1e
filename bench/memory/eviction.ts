// MemoryStore at its cap: the cost of begin + complete with fresh keys below the cap and at it, where every
// completion also evicts the least recently used record. The claim in docs/stores/memory.md is that both cost
// the same (eviction resumes one kept iterator; starting a fresh one per eviction walked V8's deleted-entry holes).
// Run: node --import tsx bench/memory/eviction.ts
import { MemoryStore } from '../../src/stores/memory.js';

const CAP = 100_000;
const SAMPLE = 50_000;
const outcome = {
  status: 201,
  headers: [] as [string, string][],
  body: Buffer.from('{"ok":true}'),
  encoding: 'identity' as const,
  storage: 'inline' as const,
};
const store = new MemoryStore({ maxEntries: CAP, sweepIntervalMs: 0 });
let next = 0;

async function request(): Promise<void> {
  const key = `k${++next}`;
  const begun = await store.begin({ key, fingerprint: 'f', leaseMs: 30_000, retentionMs: 600_000 });
  if (begun.kind !== 'acquired') throw new Error(`expected a claim, got ${begun.kind}`);
  await store.complete({ key, token: begun.token, outcome, retentionMs: 600_000 });
}

async function microsPerRequest(count: number): Promise<number> {
  const started = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await request();
  return Number(process.hrtime.bigint() - started) / 1_000 / count;
}

const below = await microsPerRequest(SAMPLE); // 0 → 50,000 records
await microsPerRequest(CAP); // fill past the cap
const atCap = await microsPerRequest(SAMPLE); // every completion evicts one
console.log(
  `MemoryStore begin + complete: ${below.toFixed(2)} µs below the cap, ${atCap.toFixed(2)} µs at the cap of ${CAP.toLocaleString('en-US')} (${store.size.toLocaleString('en-US')} records held)`,
);
