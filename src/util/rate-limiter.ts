// Client-side pacing: request starts spaced 1/requestsPerSecond apart, and at most `concurrency` requests in
// flight. The upstream client takes both, so that one school's sync never hammers the service (a slot is held
// only while a request is on the wire, never while a retry waits out its backoff); the Google provider takes the
// spacing alone, keeping each account's writes below its per-user quota. (Bursty limits that refuse rather than
// wait are token-bucket.ts; the pull's slowing down after 429s is sync/pace.ts.)
import { sleep as realSleep } from './retry.ts';

export interface RateLimit {
  requestsPerSecond: number;
  /** Requests in flight at once (acquire … release); default: no bound. */
  concurrency?: number;
}

export class RateLimiter {
  readonly #interval: number;
  readonly #concurrency: number;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  #active = 0;
  #nextStart = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(
    limit: RateLimit,
    now: () => number = () => performance.now(),
    sleep: (ms: number) => Promise<void> = realSleep,
  ) {
    if (!(limit.requestsPerSecond > 0)) throw new RangeError('rateLimit.requestsPerSecond must be > 0');
    const concurrency = limit.concurrency ?? Number.POSITIVE_INFINITY;
    if (!((Number.isInteger(concurrency) || concurrency === Number.POSITIVE_INFINITY) && concurrency >= 1)) {
      throw new RangeError('rateLimit.concurrency must be an integer ≥ 1');
    }
    this.#interval = Number.isFinite(limit.requestsPerSecond) ? 1000 / limit.requestsPerSecond : 0;
    this.#concurrency = concurrency;
    this.#now = now;
    this.#sleep = sleep;
  }

  /** Resolves when the caller may send; the caller must call `release()` once its response is read. */
  async acquire(): Promise<void> {
    if (this.#active < this.#concurrency) this.#active++;
    // A released slot is handed straight to the longest waiter, so nobody can overtake it.
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    await this.take();
  }

  /** Takes the next start slot and resolves at it: the spacing alone, holding no slot (nothing to release). */
  async take(): Promise<void> {
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
