import { honoHarness } from '../http/apps/hono.js';
import { runHttpSemantics } from '../http/support/semantics.js';
import { memoryStore } from '../support/stores.js';

// For `npm run mutate` only (vitest.mutate.config.ts; npm test covers it in test/http/hono.test.ts): the HTTP
// semantics table on Hono in-process and the memory store, the cheapest way to put every policy file under it.
runHttpSemantics(honoHarness, memoryStore);
