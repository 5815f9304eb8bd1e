// What a bench/http section's header line says about the run: the machine and the installed versions of the
// packages it measured.
import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';

/** The installed version of `name`, read from node_modules by path (some packages' `exports` hide package.json). */
export function packageVersion(name: string): string {
  const file = new URL(`../../node_modules/${name}/package.json`, import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

/** Cores, CPU model, memory and Node version, as each section's header line gives them. */
export function machine(): string {
  return `${cpus().length} × ${cpus()[0]?.model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}
