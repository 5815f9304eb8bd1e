/**
 * @module The proof's DynamoDB: a dynalite process of the run's own (proof/dynamodb.ts starts, SIGKILLs and restarts
 * it), on a LevelDB directory so that a restart keeps what it acknowledged, and taught to return the item with a
 * refused conditional write as DynamoDB does (`ReturnValuesOnConditionCheckFailure`, which dynalite 4.0 predates:
 * test/dynamodb/support/dynalite.ts), so the store runs the path it runs on AWS.
 *
 * Usage: node --import tsx proof/dynalite-server.ts <port> <directory>. Prints `ready` once it listens.
 */
import dynalite from 'dynalite';
import { returnItemOnRefusal } from '../test/dynamodb/support/dynalite.js';

const [port, path] = process.argv.slice(2);
if (port === undefined || path === undefined) {
  process.stderr.write('usage: dynalite-server.ts <port> <directory>\n');
  process.exit(2);
}
returnItemOnRefusal(true);
const server = dynalite({ path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
// As the tests do: Node's 5 s keep-alive would race clients reusing an idle connection (DynamoDB keeps them longer).
server.keepAliveTimeout = 120_000;
server.listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
