// Client-side pacing (util/rate-limiter.ts): starts spaced 1/rate apart on the limiter's clock, at most
// `concurrency` in flight, a released slot handed to the longest waiter. The clock here is the limiter's own
// injected pair (now, sleep), advanced by the sleeps it asks for, so the spacing is exact on a loaded machine.
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/util/rate-limiter.ts';

function steppedClock() {
  let t = 0;
  const slept: number[] = [];
  return {
    now: () => t,
    sleep: async (ms: number) => {
      slept.push(ms);
      t += ms;
    },
    slept,
  };
}

describe('the rate limiter', () => {
  it('spaces starts by the interval, and a late caller waits for nothing', async () => {
    const c = steppedClock();
    const r = new RateLimiter({ requestsPerSecond: 4 }, c.now, c.sleep);
    await r.take();
    await r.take();
    await r.take();
    expect(c.slept).toEqual([250, 250]);
    await c.sleep(1000);
    await r.take();
    expect(c.slept).toEqual([250, 250, 1000]);
    // The slots missed while idle are not a burst to spend: the next start is an interval after the late one.
    await r.take();
    expect(c.slept).toEqual([250, 250, 1000, 250]);
  });

  it('does not space at an infinite rate', async () => {
    const c = steppedClock();
    const r = new RateLimiter({ requestsPerSecond: Number.POSITIVE_INFINITY }, c.now, c.sleep);
    for (let i = 0; i < 5; i++) await r.take();
    expect(c.slept).toEqual([]);
  });

  it('holds at most `concurrency` in flight and hands a released slot to the longest waiter', async () => {
    const r = new RateLimiter({ requestsPerSecond: Number.POSITIVE_INFINITY, concurrency: 2 });
    await r.acquire();
    await r.acquire();
    expect(r.active).toBe(2);
    const order: string[] = [];
    const a = r.acquire().then(() => order.push('a'));
    const b = r.acquire().then(() => order.push('b'));
    await new Promise((res) => setImmediate(res));
    expect(order).toEqual([]);
    r.release();
    await a;
    expect(order).toEqual(['a']);
    expect(r.active).toBe(2);
    r.release();
    await b;
    expect(order).toEqual(['a', 'b']);
    r.release();
    r.release();
    expect(r.active).toBe(0);
  });

  it('refuses a rate or a bound that cannot be kept', () => {
    expect(() => new RateLimiter({ requestsPerSecond: 0 })).toThrow(RangeError);
    expect(() => new RateLimiter({ requestsPerSecond: Number.NaN })).toThrow(RangeError);
    expect(() => new RateLimiter({ requestsPerSecond: 1, concurrency: 0 })).toThrow(RangeError);
    expect(() => new RateLimiter({ requestsPerSecond: 1, concurrency: 1.5 })).toThrow(RangeError);
  });
});
