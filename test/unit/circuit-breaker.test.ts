import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../src/store.js';

describe('CircuitBreaker', () => {
  it('opens after the threshold, lets one probe through per interval, and closes on the first success', () => {
    let now = 0;
    const breaker = new CircuitBreaker({ failureThreshold: 3, probeIntervalMs: 250 }, () => now);
    for (let i = 0; i < 3; i++) {
      expect(breaker.tryAcquire()).toBe(true);
      breaker.onFailure();
    }
    expect(breaker.state).toBe('open');
    expect(breaker.tryAcquire()).toBe(false);
    now = 249;
    expect(breaker.tryAcquire()).toBe(false);
    now = 250;
    expect(breaker.tryAcquire()).toBe(true); // the probe
    expect(breaker.tryAcquire()).toBe(false); // only one per interval
    breaker.onFailure(); // the store is still down
    expect(breaker.tryAcquire()).toBe(false);
    now = 500;
    expect(breaker.tryAcquire()).toBe(true);
    breaker.onSuccess(); // back: every call goes through again
    expect(breaker.state).toBe('closed');
    expect(breaker.tryAcquire()).toBe(true);
    expect(breaker.tryAcquire()).toBe(true);
  });

  it('a probe that never answers does not keep the circuit shut: the next interval probes again', () => {
    let now = 0;
    const breaker = new CircuitBreaker({ failureThreshold: 1, probeIntervalMs: 100 }, () => now);
    breaker.onFailure();
    now = 100;
    expect(breaker.tryAcquire()).toBe(true); // hangs: neither success nor failure reported yet
    now = 200;
    expect(breaker.tryAcquire()).toBe(true);
  });
});
