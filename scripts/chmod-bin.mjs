// tsc does not keep the executable bit; npm links the bin either way, but `./dist/cli/main.js` should run too.
import { chmodSync, existsSync } from 'node:fs';

const bin = new URL('../dist/cli/main.js', import.meta.url);
if (existsSync(bin)) chmodSync(bin, 0o755);
