import { memoryStore, redisStore } from '../support/stores.js';
import { fastifyHarness } from './apps/fastify.js';
import { runHttpSemantics } from './support/semantics.js';

runHttpSemantics(fastifyHarness, memoryStore);
runHttpSemantics(fastifyHarness, redisStore('fastify'));
