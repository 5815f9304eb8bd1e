/**
 * @module Calls from the app's handlers back to the test's own server (ONCELY_HARNESS_URL): the test keeps the
 * case's counters, gates and logger, so a case reads them as it does in process.
 */
import type { Callbacks } from './wire';

export async function callBack<Path extends keyof Callbacks>(
  path: Path,
  body: Callbacks[Path],
): Promise<unknown> {
  const base = process.env.ONCELY_HARNESS_URL;
  if (base === undefined) throw new Error('ONCELY_HARNESS_URL is not set');
  // Next.js patches fetch for its data cache: a callback is never cached.
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    cache: 'no-store',
  });
  if (!response.ok) throw new Error(`callback ${path} answered ${response.status}: ${await response.text()}`);
  return response.status === 204 ? undefined : response.json();
}
