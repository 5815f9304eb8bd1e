import { describeOrmTransactional } from '../support/suite.js';
import { fixture } from './fixture.js';

describeOrmTransactional(fixture);
