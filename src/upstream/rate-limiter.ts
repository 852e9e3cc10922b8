// Client-side pacing so one school's sync never hammers the service: at most `concurrency` requests in flight and
// request starts spaced 1/requestsPerSecond apart. A slot is held only while a request is on the wire, never
// while a retry waits out its backoff.

export interface RateLimit {
  requestsPerSecond: number;
  concurrency: number;
}

export const DEFAULT_RATE_LIMIT: RateLimit = { requestsPerSecond: 20, concurrency: 4 };

export class RateLimiter {
  readonly #interval: number;
  readonly #concurrency: number;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  #active = 0;
  #nextStart = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(limit: RateLimit, now: () => number, sleep: (ms: number) => Promise<void>) {
    if (!(limit.requestsPerSecond > 0)) throw new RangeError('rateLimit.requestsPerSecond must be > 0');
    if (!(Number.isInteger(limit.concurrency) && limit.concurrency >= 1)) {
      throw new RangeError('rateLimit.concurrency must be an integer ≥ 1');
    }
    this.#interval = Number.isFinite(limit.requestsPerSecond) ? 1000 / limit.requestsPerSecond : 0;
    this.#concurrency = limit.concurrency;
    this.#now = now;
    this.#sleep = sleep;
  }

  /** Resolves when the caller may send; the caller must call `release()` once its response is read. */
  async acquire(): Promise<void> {
    if (this.#active < this.#concurrency) this.#active++;
    // A released slot is handed straight to the longest waiter, so nobody can overtake it.
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    if (this.#interval === 0) return;
    const now = this.#now();
    const start = Math.max(now, this.#nextStart);
    this.#nextStart = start + this.#interval;
    if (start > now) await this.#sleep(start - now);
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#active--;
  }

  get active(): number {
    return this.#active;
  }
}
