/**
 * @module `DeadlineQueue`: each deadline fires once, its duration after it was armed, in order, on one timer; one
 * marked done is never fired, and the cancelled entries are swept out so the queue holds no settled call or claim.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DeadlineQueue } from '../../src/core/deadline-queue.js';

describe('DeadlineQueue', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fires each deadline once, exactly its duration after it was added, in order', async () => {
    vi.useFakeTimers();
    const queue = new DeadlineQueue(100);
    const fired: string[] = [];
    queue.add(() => fired.push('a'));
    await vi.advanceTimersByTimeAsync(30);
    queue.add(() => fired.push('b'));
    await vi.advanceTimersByTimeAsync(69);
    expect(fired).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired).toEqual(['a']);
    await vi.advanceTimersByTimeAsync(29);
    expect(fired).toEqual(['a']);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired).toEqual(['a', 'b']);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(fired).toEqual(['a', 'b']);
    expect(queue.size).toBe(0);
  });

  it('never fires a deadline marked done, and cancelling the oldest does not delay the next', async () => {
    vi.useFakeTimers();
    const queue = new DeadlineQueue(100);
    const fired: string[] = [];
    const first = queue.add(() => fired.push('first'));
    await vi.advanceTimersByTimeAsync(50);
    queue.add(() => fired.push('second'));
    first.done = true;
    await vi.advanceTimersByTimeAsync(99);
    expect(fired).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired).toEqual(['second']);
  });

  it('keeps one timer for thousands of deadlines and none once they are settled', async () => {
    vi.useFakeTimers();
    const queue = new DeadlineQueue(1_000);
    const deadlines = Array.from({ length: 5_000 }, () => queue.add(() => {}));
    expect(vi.getTimerCount()).toBe(1);
    for (const deadline of deadlines) deadline.done = true;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(vi.getTimerCount()).toBe(0);
    expect(queue.size).toBe(0);
  });

  it('lets a callback that throws not stop the others, and one that adds a deadline re-arm one timer', async () => {
    vi.useFakeTimers();
    const queue = new DeadlineQueue(10);
    const fired: string[] = [];
    queue.add(() => {
      throw new Error('boom');
    });
    queue.add(() => {
      fired.push('second');
      queue.add(() => fired.push('added while firing'));
    });
    await vi.advanceTimersByTimeAsync(10);
    expect(fired).toEqual(['second']);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(10);
    expect(fired).toEqual(['second', 'added while firing']);
  });

  it('after a cancelled deadline, re-arms one timer for the next one instead of polling until it is due', async () => {
    vi.useFakeTimers();
    const start = Date.now();
    const queue = new DeadlineQueue(100);
    const fired: string[] = [];
    const first = queue.add(() => fired.push('first'));
    await vi.advanceTimersByTimeAsync(60);
    queue.add(() => fired.push('second'));
    first.done = true;
    // The timer of 'first' fires at 100 ms and finds 'second' due at 160 ms: the next timer is that one.
    await vi.advanceTimersByTimeAsync(40);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersToNextTimerAsync();
    expect(Date.now() - start).toBe(160);
    expect(fired).toEqual(['second']);
  });

  it('holds at most about twice its waiting deadlines: the cancelled ones are swept out as new ones come', () => {
    vi.useFakeTimers();
    const queue = new DeadlineQueue(60_000);
    for (const waiting of [0, 5, 1_000]) {
      const live = Array.from({ length: waiting }, () => queue.add(() => {}));
      let most = 0;
      // Requests: each arms a deadline and cancels it before it could fire, long before any timer runs.
      for (let i = 0; i < 20_000; i++) {
        queue.add(() => {}).done = true;
        most = Math.max(most, queue.size);
      }
      expect(most).toBeLessThanOrEqual(2 * waiting + 32);
      for (const deadline of live) deadline.done = true;
    }
  });

  it('fires in order and once each when a firing callback adds enough deadlines to sweep the queue', async () => {
    vi.useFakeTimers();
    const queue = new DeadlineQueue(10);
    const fired: string[] = [];
    const cancelled = queue.add(() => fired.push('cancelled'));
    queue.add(() => {
      fired.push('first');
      for (let i = 0; i < 100; i++) queue.add(() => fired.push(`added ${i}`));
    });
    queue.add(() => fired.push('second'));
    cancelled.done = true;
    await vi.advanceTimersByTimeAsync(10);
    expect(fired).toEqual(['first', 'second']);
    await vi.advanceTimersByTimeAsync(10);
    expect(fired).toEqual(['first', 'second', ...Array.from({ length: 100 }, (_, i) => `added ${i}`)]);
    expect(queue.size).toBe(0);
  });

  it('waits at most one duration more when the wall clock jumps back', async () => {
    vi.useFakeTimers();
    const queue = new DeadlineQueue(100);
    const fired: string[] = [];
    queue.add(() => fired.push('a'));
    await vi.advanceTimersByTimeAsync(50);
    queue.add(() => fired.push('b'));
    vi.setSystemTime(Date.now() - 3_600_000);
    await vi.advanceTimersByTimeAsync(50);
    // 'a' is due by its timer but an hour away by the clock: re-based to one duration from now.
    expect(fired).toEqual([]);
    await vi.advanceTimersByTimeAsync(100);
    expect(fired).toEqual(['a']);
  });
});
