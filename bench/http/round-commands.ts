// The Redis commands one measured round's requests made: INFO commandstats read once Redis has gone quiet before
// and after the round, so the requests still in flight when a round ends (which the server finishes) count in
// their own round and not in the next one, whichever server that is.
import { setTimeout as delay } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { parseCommandStats } from '../redis/commandstats.js';
import type { Round } from './measure.js';

export interface CountedRound extends Round {
  /**
   * Commands Redis ran for the round, by name (commandstats calls, after less before, the runner's own INFO left
   * out); commandstats counts the calls a script makes inside it as well as the script call.
   */
  readonly commands: Readonly<Record<string, number>>;
}

/** How long Redis must run no command for the requests of a round to count as finished. */
const QUIET_MS = 100;

/** Runs `measure` between two quiet readings of commandstats and adds the commands that ran to its round. */
export async function withCommands(admin: Redis, measure: () => Promise<Round>): Promise<CountedRound> {
  const before = await quietStats(admin);
  const round = await measure();
  const after = await quietStats(admin);
  const commands: Record<string, number> = {};
  for (const [name, calls] of Object.entries(after)) {
    const ran = calls - (before[name] ?? 0);
    if (name !== 'info' && ran > 0) commands[name] = ran;
  }
  return { ...round, commands };
}

/** Commandstats once two readings `QUIET_MS` apart agree on every command but INFO (the readings themselves). */
async function quietStats(admin: Redis): Promise<Record<string, number>> {
  const read = async () => parseCommandStats(await admin.info('commandstats'));
  const total = (stats: Record<string, number>) =>
    Object.entries(stats).reduce((sum, [name, calls]) => (name === 'info' ? sum : sum + calls), 0);
  let last = await read();
  for (;;) {
    await delay(QUIET_MS);
    const now = await read();
    if (total(now) === total(last)) return now;
    last = now;
  }
}
