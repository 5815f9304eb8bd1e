import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shaOf } from '../../src/stores/redis/clients/evalsha.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import beginLua from '../../src/stores/redis/scripts/begin-1.lua.generated.js';
import completeLua from '../../src/stores/redis/scripts/complete-1.lua.generated.js';
import deleteLua from '../../src/stores/redis/scripts/delete-1.lua.generated.js';
import getLua from '../../src/stores/redis/scripts/get-1.lua.generated.js';
import releaseLua from '../../src/stores/redis/scripts/release-1.lua.generated.js';
import renewLua from '../../src/stores/redis/scripts/renew-1.lua.generated.js';
import type { ScriptName } from '../../src/stores/redis/scripts.js';
import { breakGuard, firstFailure, type Guard, isWrongAnswer } from '../support/broken-guards.js';
import { requireService, services } from '../support/services.js';

// Stryker cannot mutate Lua, so each guard of the scripts is broken here by hand: the script is registered with
// the guard removed or inverted, and the conformance suite must fail on it: a wrong answer, or an error where an
// answer was due, but never a script that does not compile. A guard the suite lets through is a gap in the suite.
// The list, and the case that catches each: docs/mutation.md.
const SOURCES: Partial<Record<ScriptName, string>> = {
  begin: beginLua,
  complete: completeLua,
  release: releaseLua,
  renew: renewLua,
  get: getLua,
  delete: deleteLua,
};

// fence.lua is the preamble of complete, release and renew: each of its checks is broken in each of them.
const FENCE = (asset: ScriptName): Guard[] => [
  {
    asset,
    name: 'fence: the caller holds the current token',
    find: 'or token ~= tonumber(ARGV[1]) then return 6 end',
    replace: 'then return 6 end',
  },
  {
    asset,
    name: 'fence: the record is in progress',
    find: 'if not v or state ~= P or token',
    replace: 'if not v or token',
  },
  {
    asset,
    name: 'fence: the record is not past its retention',
    find: 'if expiresAt <= now then return 6 end',
    replace: '',
  },
];

const LUA_GUARDS: readonly Guard[] = [
  ...FENCE('complete'),
  ...FENCE('release'),
  ...FENCE('renew'),
  {
    asset: 'begin',
    name: 'another fingerprint is a mismatch',
    find: 'if fpLen ~= #fingerprint or string.sub(v, fpAt + 1, fpAt + fpLen) ~= fingerprint then return { 3 } end',
    replace: '',
  },
  {
    asset: 'begin',
    name: 'a completed record replays',
    find: 'if state == C then return v end',
    replace: '',
  },
  {
    asset: 'begin',
    name: 'a live lease is not taken over',
    find: 'if leaseUntil > now then return { 2, leaseUntil - now, attempt } end',
    replace: '',
  },
  {
    asset: 'begin',
    name: 'a record past its retention is a new key',
    find: 'local takeover = v and expiresAt > now and state ~= R',
    replace: 'local takeover = v and state ~= R',
  },
  {
    asset: 'begin',
    name: 'a released record is claimed afresh',
    find: 'local takeover = v and expiresAt > now and state ~= R',
    replace: 'local takeover = v and expiresAt > now',
  },
  {
    asset: 'begin',
    name: 'a takeover raises the token above the previous one',
    find: '\ntoken = math.max(token + 1, now)\n',
    replace: '\ntoken = takeover and now or math.max(token + 1, now)\n',
  },
  {
    asset: 'begin',
    name: 'a fresh claim raises the token above the previous one',
    find: '\ntoken = math.max(token + 1, now)\n',
    replace: '\ntoken = takeover and math.max(token + 1, now) or now\n',
  },
  {
    asset: 'begin',
    name: 'a claim after expiry counts attempts from 1',
    find: 'elseif expiresAt <= now then',
    replace: 'elseif false then',
  },
  {
    asset: 'begin',
    name: 'only a first attempt is answered with the bare token',
    find: 'if attempt == 1 then return token end',
    replace: 'if true then return token end',
  },
  {
    asset: 'begin',
    name: 'a takeover or a claim after a release keeps the label of the record it continues',
    find: 'if v and expiresAt > now then',
    replace: 'if false then',
  },
  {
    asset: 'begin',
    name: 'a new record takes the label it is given',
    find: 'label, lbit = ARGV[5], 1',
    replace: "label, lbit = '', 0",
  },
  {
    asset: 'complete',
    name: 'a completed record keeps its label',
    find: 'local lbit, kept, tail, more = layout % 2,',
    replace: 'local lbit, kept, tail, more = 0,',
  },
  {
    asset: 'complete',
    name: 'a completion keeps its own retention',
    find: 'expires = expiresAt + keep, now + tonumber(ARGV[2])',
    replace: 'expires = expiresAt + keep, expiresAt',
  },
  {
    asset: 'delete',
    name: "a delete in the token's millisecond leaves a tombstone",
    find: 'if token >= now then',
    replace: 'if false then',
  },
  {
    asset: 'delete',
    name: 'a delete reports whether a live record was there',
    find: 'if live then return 1 end',
    replace: 'if true then return 1 end',
  },
  {
    asset: 'get',
    name: 'a record past its retention is not returned',
    find: 'if expiresAt <= now then return nil end',
    replace: '',
  },
];

const clients: Redis[] = [];
beforeAll(async () => {
  await requireService('redis');
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.quit()));
});

/** A client of its own on the machine's Redis, on which the store's calls of `script` run `lua` instead. */
async function clientWith(script?: { name: ScriptName; lua: string }): Promise<Redis> {
  const client = new Redis(services.redis.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
  clients.push(client);
  await new Promise((resolve) => client.once('ready', resolve));
  if (script) {
    // The store sends EVALSHA of the script it ships through the client's generic commands: those of this script
    // go as EVAL of the broken text.
    const sha = shaOf(script.name);
    const methods = client as unknown as Record<
      'call' | 'callBuffer',
      (...args: unknown[]) => Promise<unknown>
    >;
    for (const method of ['call', 'callBuffer'] as const) {
      const send = methods[method].bind(client);
      methods[method] = (...args: unknown[]) =>
        args[0] === 'evalsha' && args[1] === sha ? send('eval', script.lua, ...args.slice(2)) : send(...args);
    }
  }
  return client;
}

async function conformance(client: Redis) {
  const prefix = `oncely-guard-${randomUUID().slice(0, 8)}`;
  return firstFailure({
    createStore: ({ clock }) => new RedisStore({ client, prefix, clock }),
    stormSize: 100,
    propertyRuns: 50,
  });
}

describe('Lua guards: the conformance suite fails when one is broken', () => {
  it('passes on the scripts as they are (the control)', async () => {
    expect(await conformance(await clientWith())).toBeUndefined();
  });

  for (const guard of LUA_GUARDS) {
    it(`${guard.asset}-1.lua: ${guard.name}`, async () => {
      const lua = breakGuard(SOURCES[guard.asset as ScriptName]!, guard);
      const caught = await conformance(await clientWith({ name: guard.asset as ScriptName, lua }));
      expect(caught, 'the conformance suite passed with this guard broken').toBeDefined();
      expect(isWrongAnswer(caught!.error), `${caught!.test}: ${String(caught!.error)}`).toBe(true);
    });
  }
});
