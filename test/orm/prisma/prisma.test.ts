/**
 * @module The ORM suite on Prisma 7 with `@prisma/adapter-pg`: the key, the writes through the interactive
 * transaction client, the outbox row and the inbox mark commit together.
 */
import { describeOrmTransactional } from '../support/suite.js';
import { fixture } from './fixture.js';

describeOrmTransactional(fixture);
