/**
 * @module The HTTP semantics table (test/http/support/semantics.ts) on `oncely/fetch`: wrapped handlers on memory
 * and Redis, in process (`new Request(…)` in, `Response` out), and the middleware in a handler chain served over a
 * real socket by @hono/node-server.
 */
import { runHttpSemantics } from '../http/support/semantics.js';
import { memoryStore, redisStore } from '../support/stores.js';
import { middlewareHarness, nodeServerHarness, wrapHarness } from './apps/suite.js';

runHttpSemantics(wrapHarness, memoryStore);
runHttpSemantics(wrapHarness, redisStore('fetch'));
runHttpSemantics(middlewareHarness, memoryStore);
runHttpSemantics(nodeServerHarness, memoryStore);
