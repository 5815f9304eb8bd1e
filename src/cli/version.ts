/**
 * @module oncely's version, read from its package.json from a checkout and from node_modules alike.
 */
import { readFileSync } from 'node:fs';
import { CommandFailed } from './errors.js';

/**
 * oncely's version from its package.json. This module sits two levels below the package root both as
 * src/cli/version.ts and as dist/cli/version.js, and npm always ships package.json at that root, so the same
 * relative URL works from a checkout and from node_modules/oncely.
 */
export function packageVersion(): string {
  const url = new URL('../../package.json', import.meta.url);
  let version: unknown;
  try {
    version = (JSON.parse(readFileSync(url, 'utf8')) as { version?: unknown }).version;
  } catch (error) {
    throw new CommandFailed(`cannot read ${url.pathname}: ${(error as Error).message}`);
  }
  if (typeof version !== 'string') throw new CommandFailed(`${url.pathname} has no version`);
  return version;
}
