import { describe, expect, it } from 'vitest';
import { fullJitterMs, retryDelayMs } from '../../src/client/backoff.js';
import { parseRetryAfter } from '../../src/client/retry-after.js';
import { retryDecision } from '../../src/client/retry-policy.js';

const policy = { baseDelayMs: 100, maxDelayMs: 1_000, maxRetryAfterMs: 5_000 };

describe('which answers are retried', () => {
  it.each([
    [409, 'in-progress'],
    [429, 'rate-limited'],
    [503, 'unavailable'],
    [500, 'server-error'],
    [502, 'server-error'],
    [504, 'server-error'],
    [599, 'server-error'],
  ])('%i, not replayed: retried (%s)', (status, reason) => {
    expect(retryDecision({ status, replayed: false })).toEqual({ retry: true, reason });
  });

  it.each([
    200, 201, 202, 204, 301, 303, 304, 400, 401, 403, 404, 408, 410, 413, 415, 422, 425, 451, 501, 505,
  ])('%i: final', (status) => {
    expect(retryDecision({ status, replayed: false })).toEqual({ retry: false });
  });

  it.each([500, 502, 503, 409, 429])(
    '%i with Idempotent-Replayed: true is final (stored: every retry gets it again)',
    (status) => {
      expect(retryDecision({ status, replayed: true })).toEqual({ retry: false });
    },
  );
});

describe('Retry-After', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');

  it('reads delay-seconds as milliseconds', () => {
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('1', now)).toBe(1_000);
    expect(parseRetryAfter(' 30 ', now)).toBe(30_000);
  });

  it('reads an HTTP-date as the time until then, a past date as 0', () => {
    expect(parseRetryAfter('Tue, 01 Jan 2030 00:00:07 GMT', now)).toBe(7_000);
    expect(parseRetryAfter('Mon, 31 Dec 2029 23:59:00 GMT', now)).toBe(0);
  });

  it('ignores what is neither (the client backs off on its own instead)', () => {
    for (const value of [null, undefined, '', '  ', '-1', '1.5', '1e3', 'soon', 'Tue, 99 Foo 2030', '0x10']) {
      expect(parseRetryAfter(value, now), String(value)).toBeUndefined();
    }
  });

  it('a huge number of seconds is a long time, not a wrap-around', () => {
    expect(parseRetryAfter('99999999999999999999', now)).toBe(Number.MAX_SAFE_INTEGER);
  });
});

describe('backoff: full jitter', () => {
  it('waits in [0, base × 2^(retry−1)), capped at maxDelayMs', () => {
    const almostOne = () => 0.999_999;
    expect([1, 2, 3, 4, 5, 6].map((retry) => fullJitterMs(retry, policy, almostOne))).toEqual([
      99, 199, 399, 799, 999, 999,
    ]);
    expect(fullJitterMs(7, policy, () => 0)).toBe(0);
  });

  it('spreads waits over the whole window (not a constant, not half of it)', () => {
    const waits = Array.from({ length: 2_000 }, () => fullJitterMs(4, policy));
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...waits)).toBeLessThan(800);
    // Uniform over [0, 800): both ends of the window are reached, and the mean sits near the middle.
    expect(waits.some((wait) => wait < 80)).toBe(true);
    expect(waits.some((wait) => wait >= 720)).toBe(true);
    const mean = waits.reduce((sum, wait) => sum + wait, 0) / waits.length;
    expect(mean).toBeGreaterThan(340);
    expect(mean).toBeLessThan(460);
  });
});

describe('the wait before a retry', () => {
  it('honours Retry-After as a floor', () => {
    expect(retryDelayMs(1, 2_000, policy, () => 0)).toBe(2_000);
    expect(retryDelayMs(1, 0, policy, () => 0.5)).toBe(50);
  });

  it('caps Retry-After at maxRetryAfterMs', () => {
    expect(retryDelayMs(1, 3_600_000, policy, () => 0)).toBe(5_000);
    expect(retryDelayMs(1, Number.MAX_SAFE_INTEGER, policy, () => 0)).toBe(5_000);
  });

  it('backs off past a short Retry-After as retries go on', () => {
    expect(retryDelayMs(5, 100, policy, () => 0.9)).toBe(900);
  });

  it('without Retry-After, is the jittered backoff', () => {
    expect(retryDelayMs(3, undefined, policy, () => 0.5)).toBe(200);
  });
});
