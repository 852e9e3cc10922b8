// Pacing and backoff for provider calls: writes stay below per-user quotas, throttling answers wait longer each
// time (with jitter, so parallel calendars do not retry in lockstep).
import { type Backoff, jitteredBackoffDelay } from '../util/backoff.ts';

export function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}

export interface BackoffSettings extends Backoff {
  maxRetries: number;
}

/** Exponential delay for retry number `attempt` (0-based), between half and all of base·2^attempt, capped. */
export function backoffDelay(attempt: number, b: BackoffSettings): number {
  return jitteredBackoffDelay(b, attempt);
}

/** At most `perSecond` starts per second, spread evenly (a write waits for its slot). */
export class Pacer {
  readonly #intervalMs: number;
  #next = 0;
  constructor(perSecond: number) {
    this.#intervalMs = 1000 / perSecond;
  }
  async take(): Promise<void> {
    const now = performance.now();
    const at = Math.max(now, this.#next);
    this.#next = at + this.#intervalMs;
    await sleep(at - now);
  }
}
