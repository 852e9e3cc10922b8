// Total failure fails fast. Each read retries a 5xx, a timeout or a dropped connection on the 1-2-4-8… schedule
// (63 s with the defaults), and a pull reads a dozen resources one after another: against an upstream failing
// everything, `sync` took 191 s (incremental) and 631 s (full), each resource spending its own retries. The
// watch here ends that: once a read has spent its retries while nothing has answered for half a minute, the next
// read is a probe, one attempt and no retries; if it fails too the service is down (UpstreamDownError) and the
// run stops. One endpoint failing alone still gets its retries: the probe of the next one answers and nothing
// stops. Timeouts are bounded by time as well as count, so a run meeting nothing but timeouts of 30 s ends
// within OUTAGE_LIMITS.limitMs too. Reads only: writes are not retried after a 5xx at all.
import { StalledError, type UpstreamError } from './errors.ts';

export interface OutageLimits {
  /** Retries stop once the trouble (time since the first failure with no answer since) would pass this. */
  spanMs: number;
  /** A give-up means the service is down only when the trouble has lasted this long. */
  downAfterMs: number;
  /** No probe runs past this much trouble: its timeout is cut to what is left. */
  limitMs: number;
}

/**
 * The default schedule's 63 s of waits fit in spanMs with room for its seven attempts on a loaded machine (with
 * 64 s the last retry was dropped there); with 30-s timeouts two attempts fit (61 s), and the probe, cut to what
 * is left of limitMs, ends the run within 90 s.
 */
export const OUTAGE_LIMITS: OutageLimits = { spanMs: 70_000, downAfterMs: 30_000, limitMs: 85_000 };

/** A failure that says nothing answered properly: a 5xx, a timeout, no connection, a body cut short. */
export function isTrouble(err: UpstreamError): boolean {
  return err.retryable && err.status !== 429 && !(err instanceof StalledError);
}

export class OutageWatch {
  readonly #now: () => number;
  readonly #limits: OutageLimits;
  /** When the first failed attempt since the last answer was sent; null while the service answers. */
  #since: number | null = null;
  #lastAttemptMs = 0;
  #last: UpstreamError | null = null;
  #down = false;

  constructor(now: () => number, limits: OutageLimits = OUTAGE_LIMITS) {
    this.#now = now;
    this.#limits = limits;
  }

  /** A new run: what earlier runs met is forgotten, so each tries the service afresh. */
  reset(): void {
    this.#since = null;
    this.#down = false;
  }

  /** Any answer that is not trouble (a 2xx, a 4xx, a 429): the service is there. */
  answered(): void {
    this.reset();
  }

  /** A read's attempt sent at `sentAt` failed with trouble. */
  failed(sentAt: number, error: UpstreamError): void {
    this.#since ??= sentAt;
    this.#lastAttemptMs = this.#now() - sentAt;
    this.#last = error;
  }

  /** The last trouble met (set whenever `down` is). */
  get last(): UpstreamError | null {
    return this.#last;
  }

  /** Whether a read starting now is a probe (one attempt): a read already gave up in this trouble. */
  get down(): boolean {
    return this.#down;
  }

  /** How long nothing has answered (ms). */
  age(): number {
    return this.#since === null ? 0 : this.#now() - this.#since;
  }

  /** A probe's timeout: what is left of limitMs, at most `timeoutMs` (0: no time left for one). */
  probeTimeout(timeoutMs: number): number {
    return Math.max(0, Math.min(timeoutMs, this.#limits.limitMs - this.age()));
  }

  /**
   * After a read's failed attempt (trouble), whether it may retry after `waitMs`: not when its retries are `spent`,
   * nor when the next attempt (as long as this one) would end past spanMs. A read giving up after downAfterMs of
   * trouble makes the next read a probe.
   */
  mayRetry(waitMs: number, spent: boolean): boolean {
    const age = this.age();
    if (!spent && age + waitMs + this.#lastAttemptMs <= this.#limits.spanMs) return true;
    if (age >= this.#limits.downAfterMs) this.#down = true;
    return false;
  }
}
