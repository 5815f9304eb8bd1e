import { describe, it } from 'vitest';
import { MemoryStore } from '../../src/index.js';
import { runStoreConformance } from '../../src/testing/index.js';

runStoreConformance({
  name: 'MemoryStore',
  harness: { describe, it },
  createStore: ({ clock }) => new MemoryStore({ clock }),
});
