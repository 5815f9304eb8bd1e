/**
 * @module The words a stored record is described in, shared by the Store contract (`store.ts`) and the inspection
 * interface (`inspection.ts`) without either importing the other: how a body is encoded and where it lives, header
 * pairs, and a key's state.
 */

/** How the body bytes of a stored outcome are encoded. */
export type BodyEncoding = 'identity' | 'gzip' | 'br';

/**
 * Where the body lives: inline in the record, in the user's blob store (the body holds the reference), or
 * nowhere because it exceeded the size cap and no blob store was configured.
 */
export type BodyStorage = 'inline' | 'blob' | 'omitted';

/** Header name/value pairs in order; duplicates are allowed (two `Link` headers stay two). */
export type HeaderPairs = ReadonlyArray<readonly [name: string, value: string]>;

/** A record's state: claimed and running, completed with its outcome, or released for the next caller. */
export type KeyState = 'inProgress' | 'completed' | 'released';
