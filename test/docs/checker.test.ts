import { describe, expect, it } from 'vitest';
import { parseMarkdown, type Snippet } from './markdown.js';
import { ruleProblems } from './rules.js';
import { typecheckSnippets } from './typecheck.js';

/**
 * The docs checker itself, on crafted blocks: if it went blind (a global placeholder back in scope, one block's
 * declarations visible to another, a Redis client without a listener let through), snippets.test.ts would pass on
 * docs a reader cannot paste.
 */
const block = (code: string, mode: Snippet['mode'] = 'check', line = 10): Snippet => ({
  file: 'docs/crafted.md',
  line,
  mode,
  code,
});
const errorsOf = async (...snippets: Snippet[]) =>
  (await typecheckSnippets(snippets)).map((d) => `${d.where}: TS${d.code}: ${d.message}`);
const rulesOf = (snippet: Snippet) => ruleProblems(snippet).map((p) => `${p.where}: ${p.message}`);

describe('the docs type-check: each block as pasted into an empty file', () => {
  it('refuses a name the block neither imports nor declares, at its line in the Markdown file', async () => {
    const errors = await errorsOf(
      block(
        [
          "import { idempotent } from 'oncely';",
          '',
          "await idempotent(async (id: string) => payments.charge(order), { key: (id) => id })('order-42');",
        ].join('\n'),
      ),
    );
    expect(errors).toEqual([
      expect.stringMatching(/^docs\/crafted\.md:12: TS2304: Cannot find name 'payments'/),
      expect.stringMatching(/^docs\/crafted\.md:12: TS2304: Cannot find name 'order'/),
    ]);
  }, 60_000);

  it('accepts the same block once it declares what is the reader’s own and imports the rest', async () => {
    const code = [
      "import type { Pool } from 'pg';",
      "import { idempotent } from 'oncely';",
      "import { PostgresStore } from 'oncely/postgres';",
      '',
      'declare const pool: Pool; // yours',
      'const order = { id: "order-42", amount: 1999 };',
      'const payments = { charge: async (o: typeof order) => ({ id: "pay_1", amount: o.amount }) };',
      'const store = new PostgresStore({ pool });',
      'await idempotent(async (id: string) => payments.charge(order), { store, key: (id) => id })(order.id);',
    ].join('\n');
    expect(await errorsOf(block(code))).toEqual([]);
  }, 60_000);

  it('keeps blocks apart: a top-level name or a global declared in one block is unknown in the next', async () => {
    const first = block(
      'export const pool = 1;\ndeclare global {\n  var order: { id: string };\n}\n',
      'check',
      1,
    );
    const second = block('console.log(order.id, pool);\n', 'check', 20);
    expect(await errorsOf(first, second)).toEqual([
      expect.stringMatching(/^docs\/crafted\.md:20: TS2304: Cannot find name 'order'/),
      expect.stringMatching(/^docs\/crafted\.md:20: TS2304: Cannot find name 'pool'/),
    ]);
  }, 60_000);

  it('keeps what one block imports from the next: a global another block loads is unknown in a block that does not', async () => {
    // reflect-metadata adds Reflect.getMetadata to the global scope of any program that loads it: blocks are checked
    // together only when their own programs would load the same such files (typecheck-groups.ts).
    const loads = block(
      "import 'reflect-metadata';\nconsole.log(Reflect.getMetadata('role', Object));\n",
      'check',
      1,
    );
    const uses = block("console.log(Reflect.getMetadata('role', Object));\n", 'check', 20);
    expect(await errorsOf(loads, uses)).toEqual([
      expect.stringMatching(/^docs\/crafted\.md:20: TS2339: Property 'getMetadata' does not exist/),
    ]);
  }, 60_000);

  it('keeps a module augmentation in its block: a member one block adds to an import is unknown in the next', async () => {
    const augments = block(
      "import 'pg';\ndeclare module 'pg' {\n  interface Pool {\n    tenant: string;\n  }\n}\n",
      'check',
      1,
    );
    const uses = block(
      "import type { Pool } from 'pg';\ndeclare const pool: Pool;\nconsole.log(pool.tenant);\n",
    );
    expect(await errorsOf(augments, uses)).toEqual([
      expect.stringMatching(/^docs\/crafted\.md:12: TS2339: Property 'tenant' does not exist on type 'Pool'/),
    ]);
  }, 60_000);

  it('compiles without the DOM lib: a browser global such as `event` is not the reader’s', async () => {
    expect(await errorsOf(block('console.log(event, name);\n'))).toEqual([
      expect.stringMatching(/Cannot find name 'event'/),
      expect.stringMatching(/Cannot find name 'name'/),
    ]);
  }, 60_000);
});

describe('the docs rules', () => {
  it("refuses a Redis client created without .on('error', …), wherever it is created", () => {
    const code = [
      "import { Redis, Cluster } from 'ioredis';", // 10
      "import { RedisStore } from 'oncely/redis';", // 11
      'const client = new Redis(process.env.REDIS_URL!);', // 12
      'const listened = new Redis(process.env.REDIS_URL!, { lazyConnect: true });', // 13
      "listened.on('error', (error) => console.error(error));", // 14
      'const store = new RedisStore({ client: new Redis() });', // 15
      'const reader = listened.duplicate();', // 16
      "const chained = new Cluster([]).on('error', console.error);", // 17
      "client.on('ready', () => {}); // not an error listener", // 18
      'const other = new Redis.Cluster([]);', // 19
    ].join('\n');
    const problems = rulesOf(block(code));
    expect(problems.map((p) => p.split(': ')[0])).toEqual([
      'docs/crafted.md:12',
      'docs/crafted.md:15',
      'docs/crafted.md:16',
      'docs/crafted.md:19',
    ]);
    expect(problems[0]).toMatch(/without \.on\('error', …\)/);
    // Listened to, each one: nothing to report.
    const fixed = [
      "import { Redis } from 'ioredis';",
      'const client = new Redis(process.env.REDIS_URL!);',
      "client.on('error', (error) => console.error('redis:', error.message));",
      'const reader = client.duplicate();',
      "reader.on('error', (error) => console.error('redis reader:', error.message));",
    ].join('\n');
    expect(rulesOf(block(fixed))).toEqual([]);
  });

  it("counts node-redis' createClient, and not oncely/client's", () => {
    const nodeRedis =
      "import { createClient } from 'redis';\nconst client = createClient();\nawait client.connect();\n";
    expect(rulesOf(block(nodeRedis))).toHaveLength(1);
    const oncely = "import { createClient } from 'oncely/client';\nconst client = createClient();\n";
    expect(rulesOf(block(oncely))).toEqual([]);
  });

  it('refuses `declare` of a value in a block marked run (it has no value when the block runs), not in one checked', () => {
    const code = [
      "import type { Pool } from 'pg';",
      'declare const pool: Pool;',
      'declare function charge(body: unknown): Promise<void>;',
      'declare global {',
      '  interface Window {}',
      '}',
      'type Order = { id: string };',
    ].join('\n');
    expect(rulesOf(block(code, 'run')).map((p) => p.split(': ')[0])).toEqual([
      'docs/crafted.md:11',
      'docs/crafted.md:12',
    ]);
    expect(rulesOf(block(code, 'check'))).toEqual([]);
  });

  it('finds oncely code hidden in a block the test does not compile (```js)', () => {
    const page = [
      '```js',
      "import { idempotent } from 'oncely';",
      '```',
      '```js',
      "import x from 'other';",
      '```',
    ];
    expect(parseMarkdown('docs/crafted.md', page.join('\n')).problems).toEqual([
      { file: 'docs/crafted.md', line: 1, message: expect.stringMatching(/make it a ```ts block/) },
    ]);
  });
});
