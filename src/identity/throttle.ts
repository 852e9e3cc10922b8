// Throttles failing clients, not accounts: each failure (a wrong bearer token, a refused sign-in) takes a token
// from the sending address's bucket; an empty bucket answers 429 to that address until it refills. Another
// address — the same person signing in correctly from elsewhere — is never affected.
// (A private bucket until the shared token-bucket module exists; see /work/notes/i10.md.)

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
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  readonly #capacity: number;
  readonly #refillPerMs: number;
  readonly #maxKeys: number;
  readonly #now: () => number;

  constructor(opts: FailureThrottleOptions = {}) {
    this.#capacity = opts.capacity ?? 10;
    this.#refillPerMs = (opts.refillPerSecond ?? 1 / 6) / 1000;
    this.#maxKeys = opts.maxKeys ?? 50_000;
    this.#now = opts.now ?? (() => performance.now());
  }

  #level(key: string, t: number): number {
    const b = this.#buckets.get(key);
    if (!b) return this.#capacity;
    return Math.min(this.#capacity, b.tokens + (t - b.at) * this.#refillPerMs);
  }

  /** Seconds the address must wait before it is heard again; 0 when it is not throttled. */
  retryAfter(key: string): number {
    const tokens = this.#level(key, this.#now());
    return tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / this.#refillPerMs / 1000));
  }

  /** Records one failure from the address. */
  fail(key: string): void {
    const t = this.#now();
    if (!this.#buckets.has(key) && this.#buckets.size >= this.#maxKeys) {
      for (const [k] of this.#buckets) if (this.#level(k, t) >= this.#capacity) this.#buckets.delete(k);
    }
    this.#buckets.set(key, { tokens: Math.max(0, this.#level(key, t) - 1), at: t });
  }
}
