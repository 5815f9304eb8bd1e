import { memoryStore, redisStore } from '../support/stores.js';
import { honoHarness, honoNodeServerHarness } from './apps/hono.js';
import { runHttpSemantics } from './support/semantics.js';

runHttpSemantics(honoHarness, memoryStore);
runHttpSemantics(honoHarness, redisStore('hono'));
runHttpSemantics(honoNodeServerHarness, memoryStore);
