// Throttling failing clients, not accounts (identity/throttle.ts): an address's failures empty its bucket and it
// waits until the bucket refills; another address is never affected; an IPv6 client is counted by its /64.
import { describe, expect, it } from 'vitest';
import { FailureThrottle } from '../../src/identity/throttle.ts';

describe('the failure throttle', () => {
  it('throttles an address after its burst, until a failure is forgiven, and no other address', () => {
    let now = 0;
    const t = new FailureThrottle({ capacity: 3, refillPerSecond: 1 / 6, now: () => now });
    for (let i = 0; i < 3; i++) {
      expect(t.retryAfter('203.0.113.5')).toBe(0);
      t.fail('203.0.113.5');
    }
    expect(t.retryAfter('203.0.113.5')).toBeGreaterThan(0);
    expect(t.retryAfter('203.0.113.5')).toBeLessThanOrEqual(6);
    expect(t.retryAfter('203.0.113.6')).toBe(0);
    now += 6_000;
    expect(t.retryAfter('203.0.113.5')).toBe(0);
  });

  it('counts an IPv6 client by its /64, whichever address of it fails', () => {
    const t = new FailureThrottle({ capacity: 2, now: () => 0 });
    t.fail('2001:db8:1:2::1');
    t.fail('2001:db8:1:2:ffff::9');
    expect(t.retryAfter('2001:db8:1:2::abcd')).toBeGreaterThan(0);
    expect(t.retryAfter('2001:db8:1:3::1')).toBe(0);
  });

  it('lets ten failures through by default', () => {
    const t = new FailureThrottle({ now: () => 0 });
    for (let i = 0; i < 10; i++) t.fail('198.51.100.1');
    expect(t.retryAfter('198.51.100.1')).toBeGreaterThan(0);
    const u = new FailureThrottle({ now: () => 0 });
    for (let i = 0; i < 9; i++) u.fail('198.51.100.1');
    expect(u.retryAfter('198.51.100.1')).toBe(0);
  });
});
