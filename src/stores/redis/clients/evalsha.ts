/**
 * @module EVALSHA with the EVAL fallback, for clients that cannot register a script on a connection the store did not
 * make (node-redis, Valkey GLIDE): the script goes by its SHA-1, and a server that lacks it (a restart, a failover,
 * `SCRIPT FLUSH`) answers NOSCRIPT, upon which the same call goes once more as EVAL, which also loads it.
 */
import { createHash } from 'node:crypto';
import { type ScriptArg, type ScriptName, scriptSource } from '../scripts.js';
import type { ScriptCall } from '../transport.js';

/** A command's words as the clients take them: strings, and Buffers for bytes. */
export type Words = Array<string | Buffer>;

const shas = new Map<ScriptName, string>();

/** The SHA-1 of a script's text, as `SCRIPT LOAD` names it. */
export function shaOf(name: ScriptName): string {
  let sha = shas.get(name);
  if (sha === undefined) {
    sha = createHash('sha1').update(scriptSource(name)).digest('hex');
    shas.set(name, sha);
  }
  return sha;
}

/** `EVALSHA sha 1 key args…` of a call. */
export function evalshaWords(call: ScriptCall): Words {
  return ['EVALSHA', shaOf(call.name), '1', call.key, ...call.args.map(word)];
}

/** `EVAL script 1 key args…` of a call. */
export function evalWords(call: ScriptCall): Words {
  return ['EVAL', scriptSource(call.name), '1', call.key, ...call.args.map(word)];
}

/** True for the server's NOSCRIPT answer, whatever the client wrapped it in. */
export function isNoScript(error: unknown): boolean {
  return error instanceof Error && /NOSCRIPT|NoScriptError/.test(error.message);
}

/** Runs the call by SHA, and once more as EVAL when the server answers NOSCRIPT. */
export async function runBySha(send: (words: Words) => Promise<unknown>, call: ScriptCall): Promise<unknown> {
  try {
    return await send(evalshaWords(call));
  } catch (error) {
    if (!isNoScript(error)) throw error;
    return send(evalWords(call));
  }
}

function word(arg: ScriptArg): string | Buffer {
  if (typeof arg === 'string') return arg;
  if (typeof arg === 'number') return String(arg);
  return Buffer.isBuffer(arg) ? arg : Buffer.from(arg.buffer, arg.byteOffset, arg.byteLength);
}
