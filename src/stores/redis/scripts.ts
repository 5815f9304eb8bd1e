/**
 * @module The Redis store's Lua scripts: each `scripts/<verb>-<keys>.lua` (embedded at build time), its text for
 * EVAL, and its registration on an ioredis `Cluster` with `defineCommand` under a name suffixed with its SHA-1, so
 * EVALSHA, the NOSCRIPT reload and routing come with the driver in the pipelines there.
 */
// This file's declarations use Node's types (Buffer, node:*): the directive, kept in its .d.ts, loads @types/node
// for users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { InvalidOptionsError } from '../../core/errors.js';
import beginLua from './scripts/begin-1.lua.generated.js';
import completeLua from './scripts/complete-1.lua.generated.js';
import deleteLua from './scripts/delete-1.lua.generated.js';
import getLua from './scripts/get-1.lua.generated.js';
import releaseLua from './scripts/release-1.lua.generated.js';
import renewLua from './scripts/renew-1.lua.generated.js';
import watchLua from './scripts/watch-1.lua.generated.js';

/** A caller-owned ioredis connection: standalone, Sentinel-backed, or a Cluster. */
export type RedisClient = Redis | Cluster;

const SOURCES = {
  begin: beginLua,
  complete: completeLua,
  release: releaseLua,
  renew: renewLua,
  get: getLua,
  delete: deleteLua,
  watch: watchLua,
} as const;

export type ScriptName = keyof typeof SOURCES;
export type ScriptArg = string | number | Buffer | Uint8Array;

/**
 * The command each script is registered under: `oncely_<verb>_<first 10 hex of its SHA-1>`. The suffix is the
 * script's version, derived from its text, so two oncely versions sharing one client never overwrite each
 * other's scripts and a changed script can never be forgotten when bumping a version by hand.
 */
export const commandNames: Readonly<Record<ScriptName, string>> = Object.fromEntries(
  Object.entries(SOURCES).map(([name, lua]) => [
    name,
    `oncely_${name}_${createHash('sha1').update(lua).digest('hex').slice(0, 10)}`,
  ]),
) as Record<ScriptName, string>;

/** The text of a script (after the embed step's includes): what EVAL sends when a server lacks it. */
export function scriptSource(name: ScriptName): string {
  return SOURCES[name];
}

type ScriptFunction = (key: string, ...args: ScriptArg[]) => Promise<unknown>;
/** The methods `defineCommand` adds: `<name>` (strings back) and `<name>Buffer` (bytes back). */
type ScriptMethods = Record<string, ScriptFunction | undefined>;

/**
 * Registers every script on the client with `defineCommand` (once per client), which gives EVALSHA with an EVAL
 * fallback per connection and a transparent reload after NOSCRIPT (a restart, failover or `SCRIPT FLUSH`).
 * Cluster routes each call by its single key's slot.
 */
export function registerScripts(client: RedisClient): void {
  const methods = client as unknown as ScriptMethods;
  for (const [name, lua] of Object.entries(SOURCES)) {
    const command = commandNames[name as ScriptName];
    if (typeof methods[command] === 'function') continue;
    client.defineCommand(command, { lua, numberOfKeys: 1 });
  }
}

/** Runs a registered script; `bytes` asks for Buffers instead of strings (bodies are binary). */
export function runScript(
  target: RedisClient | ReturnType<RedisClient['pipeline']>,
  name: ScriptName,
  key: string,
  args: readonly ScriptArg[],
  bytes = false,
): Promise<unknown> {
  const method = (target as unknown as ScriptMethods)[`${commandNames[name]}${bytes ? 'Buffer' : ''}`];
  // Only a client the store did not register its scripts on gets here (a duplicate() made after the store).
  if (method === undefined)
    throw new InvalidOptionsError(
      `the oncely script ${name} is not registered on this client; pass it to RedisStore`,
    );
  return method.call(target, key, ...args);
}

export function isCluster(client: RedisClient): client is Cluster {
  return client.isCluster === true;
}
