import { nodeHarness } from './apps/node.js';
import { runHttpSemantics } from './support/semantics.js';
import { memoryStore, redisStore } from './support/stores.js';

runHttpSemantics(nodeHarness, memoryStore);
runHttpSemantics(nodeHarness, redisStore('node'));
