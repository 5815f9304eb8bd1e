/**
 * @module The tarball of this run for the test files that install or unpack the package: packed once by the global
 * setup pack-once.ts (listed in vitest.config.ts), which hands its address over with Vitest's provide/inject.
 */
import { inject } from 'vitest';

/** What the global setup answers: the tarball's path, or why there is none (a stale dist/, a failed pack). */
export type Packed = { readonly path: string } | { readonly error: string };

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where pack-once.ts answers with a {@link Packed}; absent when no queued file asked for the tarball. */
    packedTarball?: string;
  }
}

/**
 * The path of the tarball `npm pack` made of this checkout for this run, once the pack has ended (the files that
 * need it share one: they only read it). Rejects with the reason when there is none.
 */
export async function packedTarball(): Promise<string> {
  const address = inject('packedTarball');
  if (address === undefined) {
    throw new Error(
      'no tarball was packed for this run: test/package/support/pack-once.ts (a globalSetup of vitest.config.ts) ' +
        'packs one when a file of the run calls packedTarball(); run this file under that config, not in a ' +
        'watch-mode rerun of a run that had no such file.',
    );
  }
  const answer = (await (await fetch(address)).json()) as Packed;
  if ('error' in answer) throw new Error(answer.error);
  return answer.path;
}
