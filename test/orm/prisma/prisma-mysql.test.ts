import { describeOrmMySql } from '../support/mysql-suite.js';
import { mysqlFixture } from './mysql-fixture.js';

describeOrmMySql(mysqlFixture);
