import { fastifyHarness } from './apps/fastify.js';
import { runHttpSemantics } from './support/semantics.js';
import { memoryStore, redisStore } from './support/stores.js';

runHttpSemantics(fastifyHarness, memoryStore);
runHttpSemantics(fastifyHarness, redisStore('fastify'));
