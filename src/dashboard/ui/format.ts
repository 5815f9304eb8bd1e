/**
 * @module How the page writes numbers, times and keys for an operator: durations in the unit read fastest, ages,
 * clock times, counts, and storage keys shortened to what tells them apart.
 */
/** A duration in the unit an operator reads fastest: 850 ms, 12.3 s, 4 min, 2.5 h, 3 d. */
export function duration(ms: number): string {
  const abs = Math.abs(ms);
  const sign = ms < 0 ? '-' : '';
  if (abs < 1_000) return `${sign}${Math.round(abs)} ms`;
  if (abs < 60_000) return `${sign}${(abs / 1_000).toFixed(abs < 10_000 ? 1 : 0)} s`;
  if (abs < 3_600_000) return `${sign}${Math.round(abs / 60_000)} min`;
  if (abs < 86_400_000) return `${sign}${(abs / 3_600_000).toFixed(1)} h`;
  return `${sign}${(abs / 86_400_000).toFixed(1)} d`;
}

export function ago(at: number | null, now: number): string {
  return at === null ? '–' : `${duration(now - at)} ago`;
}

export function clock(at: number): string {
  return new Date(at).toLocaleTimeString([], { hour12: false });
}

export function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** Storage keys are 43 characters of hash: the first 12 tell them apart on a page; the title holds the rest. */
export function shortKey(key: string): string {
  return key.length > 14 ? `${key.slice(0, 12)}…` : key;
}
