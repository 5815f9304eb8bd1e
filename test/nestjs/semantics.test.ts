import { runHttpSemantics } from '../http/support/semantics.js';
import { memoryStore, redisStore } from '../support/stores.js';
import { nestHarness } from './apps/nest.js';

// The semantics table every oncely adapter runs (test/http/support/semantics.ts), against a real Nest application on
// each platform, on the memory store and on the machine's Redis.
const redis = redisStore('nestjs');
for (const harness of [nestHarness('express'), nestHarness('fastify')]) {
  runHttpSemantics(harness, memoryStore);
  runHttpSemantics(harness, redis);
}
