// Throttles failing clients, not accounts: each failure (a wrong bearer token, a refused sign-in) takes a token
// from the sending address's bucket; an empty bucket answers 429 to that address until it refills. Another
// address — the same person signing in correctly from elsewhere — is never affected. Addresses are counted by
// addressKey: an IPv6 client by its /64, which it can rotate through freely.
import { addressKey } from '../util/address-key.ts';
import { TokenBuckets } from '../util/token-bucket.ts';

export interface FailureThrottleOptions {
  /** Failures an address may make in a burst before it is throttled. Default 10. */
  capacity?: number;
  /** Failures forgiven per second. Default one every 6 seconds (10 a minute). */
  refillPerSecond?: number;
  /** Addresses remembered before fully refilled ones are forgotten. */
  maxKeys?: number;
  now?: () => number;
}

export class FailureThrottle {
  readonly #buckets: TokenBuckets;

  constructor(opts: FailureThrottleOptions = {}) {
    this.#buckets = new TokenBuckets({
      capacity: opts.capacity ?? 10,
      refillPerSecond: opts.refillPerSecond ?? 1 / 6,
      maxKeys: opts.maxKeys ?? 50_000,
      ...(opts.now ? { now: opts.now } : {}),
    });
  }

  /** Seconds the address must wait before it is heard again; 0 when it is not throttled. */
  retryAfter(address: string): number {
    return this.#buckets.retryAfter(addressKey(address));
  }

  /** Records one failure from the address. */
  fail(address: string): void {
    this.#buckets.spend(addressKey(address));
  }
}
