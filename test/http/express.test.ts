import express from 'express';
import express4 from 'express4';
import { memoryStore, redisStore } from '../support/stores.js';
import { expressHarness } from './apps/express.js';
import { runHttpSemantics } from './support/semantics.js';

const redis = redisStore('express');
for (const harness of [
  expressHarness('express 5', express as never),
  expressHarness('express 4', express4 as never),
]) {
  runHttpSemantics(harness, memoryStore);
  runHttpSemantics(harness, redis);
}
