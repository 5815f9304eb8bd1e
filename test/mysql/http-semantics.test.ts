/**
 * @module The HTTP semantics table (test/http/support/semantics.ts) on MySqlStore: Express 5 over a real socket, on
 * the machine's MariaDB through a `mysql2/promise` pool, the store made as docs/stores/mysql.md shows. One adapter
 * is enough: the table asks the store the same questions whichever adapter sends them.
 */
import express from 'express';
import { expressHarness } from '../http/apps/express.js';
import { runHttpSemantics } from '../http/support/semantics.js';
import { mysqlStore } from '../support/stores.js';

runHttpSemantics(expressHarness('express 5', express as never), mysqlStore('http_semantics'));
