/**
 * @module The HTTP semantics table (test/http/support/semantics.ts) on DynamoDbStore: `oncely/node` over a real
 * socket, on dynalite, the store made as docs/stores/dynamodb.md shows. One adapter is enough: the table asks the
 * store the same questions whichever adapter sends them.
 */
import { nodeHarness } from '../http/apps/node.js';
import { runHttpSemantics } from '../http/support/semantics.js';
import { dynamoDbStore } from '../support/stores.js';

runHttpSemantics(nodeHarness, dynamoDbStore('http_semantics'));
