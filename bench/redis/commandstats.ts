// `INFO commandstats` read as calls per command: what the Redis benches count round trips and commands with (the
// store's script calls, and the calls the scripts make inside them, which commandstats counts too).

/** `INFO commandstats` (or an INFO reply holding it) as calls per command: `evalsha`, `client|setinfo`, … */
export function parseCommandStats(info: string): Record<string, number> {
  const stats: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) stats[match[1]!] = Number(match[2]);
  return stats;
}
