/**
 * @module What the HTTP layer reports on the diagnostics channels itself: the answers it gives without the engine (a bad
 * key or body, a local-cache replay or mismatch). The engine reports everything it decides (docs/diagnostics.md).
 */

import type { RejectionCode } from '../core/diagnostics.js';
import {
  publishRejected,
  publishReplayed,
  rejectionsObserved,
  replaysObserved,
} from '../core/diagnostics-publish.js';
import type { HttpAnswer } from './problem.js';
import { routeLabel } from './scope.js';

/** `answer`, a refusal of the layer's own, reported on `oncely:rejected` when someone listens. */
export function rejected(
  code: RejectionCode,
  answer: HttpAnswer,
  method: string,
  route: string | undefined,
  key?: string,
): HttpAnswer {
  if (rejectionsObserved()) publishRejected(code, answer.status, key, routeLabel(method, route));
  return answer;
}

/** `answer`, a replay from the local cache, reported on `oncely:replayed` when someone listens. */
export function replayedFromCache(
  answer: HttpAnswer,
  key: string,
  method: string,
  route: string | undefined,
): HttpAnswer {
  if (replaysObserved()) publishReplayed(key, routeLabel(method, route));
  return answer;
}
