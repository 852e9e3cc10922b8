// Pacing for provider calls: writes stay below per-user quotas. (Their retries are src/util/retry.ts, jittered so
// that parallel calendars do not retry in lockstep.)
import { sleep } from '../../util/retry.ts';

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
