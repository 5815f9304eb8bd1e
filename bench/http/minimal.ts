// The floor the layer is measured against: the least an Idempotency-Key layer on Redis can do and still be one
// (issue 6 quotes "a minimal two-script Lua layer"). One script claims or replays, one stores the body; no
// scoping, hashing, fencing, lease renewal, timeouts, header policy or compression. Bench-only code: it shows
// what two round trips cost on this machine, so the table can say how much of the layer's price is the layer.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Redis } from 'ioredis';

const BEGIN = `
local r = redis.call('HMGET', KEYS[1], 's', 'f', 'b')
if not r[1] then
  redis.call('HSET', KEYS[1], 's', 'p', 'f', ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1}
end
if r[2] ~= ARGV[1] then return {3} end
if r[1] == 'c' then return {4, r[3]} end
return {2}`;

const COMPLETE = `
if redis.call('HGET', KEYS[1], 's') ~= 'p' then return 0 end
redis.call('HSET', KEYS[1], 's', 'c', 'b', ARGV[1])
return 1`;

type Reply = [1] | [2] | [3] | [4, string];
interface MinimalCommands {
  minimalBegin(key: string, fingerprint: string, ttlMs: number): Promise<Reply>;
  minimalComplete(key: string, body: string): Promise<number>;
}

/** Claims `key` for a request: `run` (the caller runs and stores), a stored body to replay, or a 409/422. */
export type MinimalStart =
  | { kind: 'run' }
  | { kind: 'replay'; body: string }
  | { kind: 'refuse'; status: number };

export function minimalLayer(redis: Redis) {
  redis.defineCommand('minimalBegin', { numberOfKeys: 1, lua: BEGIN });
  redis.defineCommand('minimalComplete', { numberOfKeys: 1, lua: COMPLETE });
  const commands = redis as unknown as MinimalCommands;
  return {
    async start(key: string | undefined, body: unknown): Promise<MinimalStart> {
      if (key === undefined) return { kind: 'refuse', status: 400 };
      const reply = await commands.minimalBegin(`min:${key}`, JSON.stringify(body), 600_000);
      if (reply[0] === 1) return { kind: 'run' };
      if (reply[0] === 4) return { kind: 'replay', body: reply[1] };
      return { kind: 'refuse', status: reply[0] === 3 ? 422 : 409 };
    },
    complete(key: string, body: string): Promise<number> {
      return commands.minimalComplete(`min:${key}`, body);
    },
    /** Holds a Node response's `end` until the body is stored (Express and node:http). */
    holdEnd(res: ServerResponse, key: string): void {
      const end = res.end;
      res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
        res.end = end;
        commands
          .minimalComplete(`min:${key}`, String(chunk ?? ''))
          .then(() => (end as (...args: unknown[]) => void).call(this, chunk, ...rest));
        return this;
      } as typeof res.end;
    },
  };
}

export const keyOf = (req: IncomingMessage) => req.headers['idempotency-key'] as string | undefined;
