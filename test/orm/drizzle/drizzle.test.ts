import { describeOrmTransactional } from '../support/suite.js';
import { fixture as onNodePostgres } from './fixture.js';
import { fixture as onPostgresJs } from './postgres-js/fixture.js';

describeOrmTransactional(onNodePostgres);
describeOrmTransactional(onPostgresJs);
