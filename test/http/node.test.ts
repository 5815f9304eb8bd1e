import { memoryStore, redisStore } from '../support/stores.js';
import { nodeHarness } from './apps/node.js';
import { runHttpSemantics } from './support/semantics.js';

runHttpSemantics(nodeHarness, memoryStore);
runHttpSemantics(nodeHarness, redisStore('node'));
