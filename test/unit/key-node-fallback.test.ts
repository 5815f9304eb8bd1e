import { createHash } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { scopedKey } from '../../src/store.js';

// Apart from test/unit/key-and-fingerprint.test.ts because it loads src/core/key.ts (and errors.ts) again inside a
// test: `npm run mutate` would then count those modules' constants as covered by this one test and run only it
// against their mutants, instead of leaving them out as static (docs/mutation.md).
describe('keys', () => {
  it('scoped keys are SHA-256 over scope, NUL and key, the same on a Node without crypto.hash (before 20.12)', async () => {
    // Stored keys must not change with the Node version, or every record would be orphaned by an upgrade.
    const expected = createHash('sha256').update('POST /pay\0k-1').digest('base64url');
    expect(scopedKey('POST /pay', 'k-1')).toBe(expected);
    vi.resetModules();
    vi.doMock('node:crypto', async (original) => ({
      ...(await original<typeof import('node:crypto')>()),
      hash: undefined,
    }));
    try {
      const older = await import('../../src/core/key.js');
      expect(older.scopedKey('POST /pay', 'k-1')).toBe(expected);
    } finally {
      vi.doUnmock('node:crypto');
      vi.resetModules();
    }
  });
});
