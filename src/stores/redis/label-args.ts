/**
 * @module The label region begin-1.lua is sent for a new record, one buffer per label kept for reuse: labels are
 * few (a route, a function, a topic each), so nearly every claim sends a buffer already made and checked.
 */
import { checkLabel } from '../../core/label.js';
import { encodeLabel } from './record.js';

/** Labels remembered; past it the cache starts over (a user's scope names could be many, never unbounded here). */
const MAX_CACHED = 256;

export class LabelArgs {
  readonly #cache = new Map<string, Buffer>();

  /** The label region of `label` (checked once, then cached); throws `InvalidOptionsError` for a bad label. */
  of(label: string): Buffer {
    let region = this.#cache.get(label);
    if (region === undefined) {
      checkLabel(label, 'redis');
      region = encodeLabel(label);
      if (this.#cache.size >= MAX_CACHED) this.#cache.clear();
      this.#cache.set(label, region);
    }
    return region;
  }
}
