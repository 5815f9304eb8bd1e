import { afterEach, describe, expect, it, vi } from 'vitest';
import { openStore } from '../../src/cli/open-store.js';
import { idempotent, isInvalidOptionsError, MemoryStore } from '../../src/index.js';

// A MemoryStore deployed by mistake passes every test on one instance, and then runs effects twice behind a load
// balancer or across a restart: under NODE_ENV=production it is refused at construction unless asked for by name.
afterEach(() => {
  vi.unstubAllEnvs();
});

describe('MemoryStore under NODE_ENV=production', () => {
  it('is refused with a typed error that says why and what to use instead', () => {
    vi.stubEnv('NODE_ENV', 'production');
    let thrown: unknown;
    try {
      new MemoryStore();
    } catch (error) {
      thrown = error;
    }
    expect(isInvalidOptionsError(thrown)).toBe(true);
    const { message } = thrown as Error;
    expect(message).toContain("NODE_ENV is 'production'");
    expect(message).toContain('not shared with the other instances');
    expect(message).toContain('lost on every restart');
    expect(message).toContain('RedisStore');
    expect(message).toContain('allowInProduction: true');
  });

  it('is allowed when asked for by name, and in any other environment', () => {
    vi.stubEnv('NODE_ENV', 'production');
    expect(new MemoryStore({ allowInProduction: true }).size).toBe(0);
    expect(() => new MemoryStore({ allowInProduction: false })).toThrow(/MemoryStore refused/);
    expect(() => new MemoryStore({ allowInProduction: 'yes' as never })).toThrow(
      'allowInProduction must be true or false',
    );
    for (const env of ['development', 'test', '']) {
      vi.stubEnv('NODE_ENV', env);
      expect(new MemoryStore().size).toBe(0);
    }
  });

  it('idempotent() without a store is refused where it is written, not at its first call', () => {
    vi.stubEnv('NODE_ENV', 'production');
    expect(() => idempotent(async (id: string) => id, { key: (id) => id, scope: 'charge' })).toThrow(
      /MemoryStore refused/,
    );
  });

  it('the CLI demo (oncely demo, npm run demo) still opens its in-process store', async () => {
    vi.stubEnv('NODE_ENV', 'production');
    const opened = await openStore('memory');
    expect(opened.store.name).toBe('memory');
    await opened.close();
  });
});
