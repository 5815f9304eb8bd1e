// The build starts from an empty dist/: tsc never deletes the output of a source that was renamed or removed, and
// `files: ["dist"]` would ship such a stale module to npm.
import { rmSync } from 'node:fs';

rmSync(new URL('../dist/', import.meta.url), { recursive: true, force: true });
