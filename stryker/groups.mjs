// The groups `npm run mutate` (scripts/mutate.mjs) runs Stryker over, one after another: each mutates one part of
// the library and runs, against each of its mutants, only the tests written for that part (in this order: the
// focused ones first, so a mutant they kill costs no more). A mutant of the engine is then never run against the
// HTTP suite or PostgreSQL: the score counts what the part's own tests catch, and each run stays small.
//
// `tests` are paths, not globs: vitest.mutate.config.ts runs them in the order given.

/** @type {readonly { name: string; mutate: string[]; tests: string[] }[]} */
export const GROUPS = [
  {
    name: 'core',
    mutate: ['src/core/**/*.ts'],
    tests: [
      'test/unit/circuit-breaker.test.ts',
      'test/unit/deadline-queue.test.ts',
      'test/unit/engine-options.test.ts',
      'test/unit/key-and-fingerprint.test.ts',
      'test/unit/contracts.test.ts',
      'test/unit/envelope.test.ts',
      'test/unit/events.test.ts',
      'test/unit/claim.test.ts',
      'test/unit/engine.test.ts',
      'test/unit/idempotent.test.ts',
      'test/contract/memory.test.ts',
      // The instrumentation hook as oncely/otel drives it, the engine as the HTTP layer drives it (in-process,
      // memory store), and transactional claims on PostgreSQL.
      'test/otel/engine.test.ts',
      'test/mutation/http-semantics.mutate.ts',
      'test/postgres/transactional.test.ts',
    ],
  },
  {
    name: 'memory',
    mutate: ['src/stores/memory.ts'],
    tests: ['test/contract/memory.test.ts', 'test/unit/memory-store.test.ts'],
  },
  {
    name: 'redis',
    mutate: ['src/stores/redis/*.ts', '!src/stores/redis/index.ts'],
    tests: [
      // First: endpoint.ts (what the store tells telemetry about its server) runs in every store's constructor,
      // so every test covers its mutants, and this small file is the one that kills them.
      'test/otel/stores.test.ts',
      'test/redis/store-surface.test.ts',
      'test/mutation/redis-conformance.mutate.ts',
      'test/redis/store.test.ts',
      'test/redis/wait-for.test.ts',
    ],
  },
  {
    name: 'postgres',
    mutate: ['src/stores/postgres/*.ts', '!src/stores/postgres/index.ts'],
    // Not test/postgres/isolation.test.ts (20 s of bursts at each isolation level) nor crash.test.ts (a process
    // killed mid-transaction): too slow to run against each mutant.
    tests: [
      // First: endpoint.ts runs in every store's constructor (see redis above).
      'test/otel/stores.test.ts',
      'test/postgres/store.test.ts',
      'test/mutation/postgres-conformance.mutate.ts',
      'test/postgres/transactional.test.ts',
      'test/postgres/transaction-escape.test.ts',
    ],
  },
  {
    name: 'http',
    mutate: [
      'src/http/{answers,content-coding,key-header,local-cache,options,outcome-policy,policy,problem,request-fingerprint,run-times,scope}.ts',
    ],
    tests: [
      'test/http/policy.test.ts',
      'test/http/adapters.test.ts',
      'test/mutation/http-semantics.mutate.ts',
    ],
  },
];

/** The group the environment names (ONCELY_MUTATE_GROUP), or every group at once when it names none. */
export function selectedGroup(name = process.env.ONCELY_MUTATE_GROUP) {
  if (name === undefined || name === '' || name === 'all') {
    return {
      name: 'all',
      mutate: GROUPS.flatMap((group) => group.mutate),
      tests: [...new Set(GROUPS.flatMap((group) => group.tests))],
    };
  }
  const group = GROUPS.find((candidate) => candidate.name === name);
  if (group === undefined)
    throw new Error(`unknown mutation group ${name}: ${GROUPS.map((g) => g.name).join(', ')}`);
  return group;
}
