// Token buckets: a bucket holds up to `capacity` tokens and refills `refillPerSecond` continuously. One bucket
// paces a whole server (the sandbox's rate limit); keyed buckets pace each client (feed rate limits, failed
// sign-ins and failed capability lookups, where a failure spends a token).

export interface TokenBucketOptions {
  capacity: number;
  refillPerSecond: number;
  /** Milliseconds on a monotonic clock. Default performance.now. */
  now?: () => number;
}

export class TokenBucket {
  readonly #capacity: number;
  readonly #refillPerMs: number;
  readonly #now: () => number;
  #tokens: number;
  #at: number;

  constructor(opts: TokenBucketOptions) {
    this.#capacity = opts.capacity;
    this.#refillPerMs = opts.refillPerSecond / 1000;
    this.#now = opts.now ?? (() => performance.now());
    this.#tokens = opts.capacity;
    this.#at = this.#now();
  }

  /** Tokens in the bucket now (fractional). */
  level(t: number = this.#now()): number {
    return Math.min(this.#capacity, this.#tokens + (t - this.#at) * this.#refillPerMs);
  }

  /** True when the bucket is full: forgetting it changes nothing. */
  isFull(t: number = this.#now()): boolean {
    return this.level(t) >= this.#capacity;
  }

  /** Takes a token when there is one: 0; else the whole seconds (≥ 1) until one is there. Takes nothing then. */
  take(): number {
    const t = this.#now();
    this.#settle(t);
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return 0;
    }
    return this.#secondsToOne(this.#tokens);
  }

  /** Spends a token, if any is left (a failure counted against the bucket). */
  spend(): void {
    const t = this.#now();
    this.#settle(t);
    this.#tokens = Math.max(0, this.#tokens - 1);
  }

  /** Whole seconds (≥ 1) until a token is there; 0 when one is there now. */
  retryAfter(): number {
    const tokens = this.level();
    return tokens >= 1 ? 0 : this.#secondsToOne(tokens);
  }

  #settle(t: number): void {
    this.#tokens = this.level(t);
    this.#at = t;
  }

  #secondsToOne(tokens: number): number {
    return Math.max(1, Math.ceil((1 - tokens) / this.#refillPerMs / 1000));
  }
}

export interface TokenBucketsOptions extends TokenBucketOptions {
  /** Buckets kept before full ones are forgotten. Default 50,000. */
  maxKeys?: number;
}

/** One bucket per key (a client address), made on first use; full buckets are forgotten when there are many. */
export class TokenBuckets {
  readonly #buckets = new Map<string, TokenBucket>();
  readonly #opts: TokenBucketOptions;
  readonly #maxKeys: number;

  constructor(opts: TokenBucketsOptions) {
    const now = opts.now ?? (() => performance.now());
    this.#opts = { capacity: opts.capacity, refillPerSecond: opts.refillPerSecond, now };
    this.#maxKeys = opts.maxKeys ?? 50_000;
  }

  /** See TokenBucket.take. */
  take(key: string): number {
    return this.#bucket(key).take();
  }

  /** See TokenBucket.spend. */
  spend(key: string): void {
    this.#bucket(key).spend();
  }

  /** See TokenBucket.retryAfter; a key never seen has a full bucket. */
  retryAfter(key: string): number {
    return this.#buckets.get(key)?.retryAfter() ?? 0;
  }

  get size(): number {
    return this.#buckets.size;
  }

  #bucket(key: string): TokenBucket {
    let b = this.#buckets.get(key);
    if (!b) {
      if (this.#buckets.size >= this.#maxKeys) {
        for (const [k, other] of this.#buckets) if (other.isFull()) this.#buckets.delete(k);
      }
      b = new TokenBucket(this.#opts);
      this.#buckets.set(key, b);
    }
    return b;
  }
}
