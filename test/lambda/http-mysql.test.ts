/**
 * @module The Lambda HTTP suite (./http-suite.ts) on MariaDB (MySqlStore, over a mysql2/promise pool): a file of its own, so each file stays well under a
 * minute.
 */
import { mysqlStore } from '../support/stores.js';
import { runLambdaHttp } from './http-suite.js';

runLambdaHttp(mysqlStore('lambda_http'));
