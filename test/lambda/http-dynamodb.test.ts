/**
 * @module The Lambda HTTP suite (./http-suite.ts) on DynamoDB (dynalite): a file of its own, so each file stays well under a
 * minute.
 */
import { dynamoDbStore } from '../support/stores.js';
import { runLambdaHttp } from './http-suite.js';

runLambdaHttp(dynamoDbStore('lambda_http'));
