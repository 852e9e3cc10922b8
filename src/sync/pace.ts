// The pace of a school's incremental pulls when its upstream pushes back. Every minute is cheap for an upstream
// that keeps up; one that answers 429 is told so by us pulling less: after a pull that met 429s, incremental fires
// are let pass for a while that doubles with each such pull (2, 4, 8, then 15 minutes at most), and the first pull
// that meets none brings the pace back to the schedule's. A Retry-After longer than that while is honoured.
// Kept in memory: a restarted process starts at the schedule's pace, and meets the 429s again if they persist.

const FIRST_MS = 2 * 60_000;
/** The longest the pace holds a school's incremental fires back (a longer Retry-After aside). */
export const MAX_MS = 15 * 60_000;

export const SLOWED_DOWN = 'upstream asked us to slow down (429)';

export interface PaceOptions {
  firstMs?: number;
  maxMs?: number;
}

export class Pace {
  readonly #firstMs: number;
  readonly #maxMs: number;
  #intervalMs = 0;
  #until: number | null = null;

  constructor(opts: PaceOptions = {}) {
    this.#firstMs = opts.firstMs ?? FIRST_MS;
    this.#maxMs = Math.max(this.#firstMs, opts.maxMs ?? MAX_MS);
  }

  /** After each pull: how many of its requests met a 429, and the longest Retry-After they asked for. */
  afterPull(at: Date, throttled: number, retryAfterMs: number | null = null): void {
    if (throttled === 0) {
      this.#intervalMs = 0;
      this.#until = null;
      return;
    }
    this.#intervalMs = this.#intervalMs === 0 ? this.#firstMs : Math.min(this.#maxMs, this.#intervalMs * 2);
    this.#until = at.getTime() + Math.max(this.#intervalMs, retryAfterMs ?? 0);
  }

  /** When a fire at `at` is let pass: no pull before the returned instant; null when the pace is the schedule's. */
  deferredUntil(at: Date): Date | null {
    return this.#until !== null && at.getTime() < this.#until ? new Date(this.#until) : null;
  }
}
