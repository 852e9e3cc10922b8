// The upstream's clock, as its responses tell it. What is new upstream is decided by the upstream's own time (its
// records' updatedAt are stamped on it), so the pull's cursors come from the `Date` header of the listing that
// was read, never from this server's clock; and how far the two clocks disagree is measured on every pull.

/** One response's reading: its `Date` header and when, on this server's clock, the request went and the answer came. */
export interface ClockSample {
  /** The `Date` header (ms since the epoch; HTTP dates have a resolution of one second). */
  date: number;
  /** This server's clock when the request was sent, and when the answer's headers arrived. */
  sentAt: number;
  receivedAt: number;
}

/** A response's `Date` header as a sample, or null when it sent none (or one that is not a date). */
export function clockSample(header: string | null, sentAt: number, receivedAt: number): ClockSample | null {
  if (header === null) return null;
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : { date, sentAt, receivedAt };
}

/**
 * How far ahead of this server's clock an upstream's `Date` may be and still be taken for its clock. A clock a
 * day ahead is not a drifting clock but a lying header (a proxy's, a broken server's): a cursor taken from it
 * would ask for edits from the future, and one past the year 9999 is refused by the upstream. Behind is safe (a
 * cursor too early only reads more), and a sandbox weeks behind is how the tests play a skewed upstream.
 */
export const MAX_AHEAD_MS = 86_400_000;

/** Whether a sample's `Date` may set a cursor: not beyond MAX_AHEAD_MS ahead of this server's clock. */
export function trusted(s: ClockSample): boolean {
  return s.date - s.receivedAt <= MAX_AHEAD_MS;
}

/**
 * The skew (upstream's clock minus this server's) that a run's responses allow. Each sample bounds it: the answer
 * was made between the request's sending and its arrival, at an upstream time in [date, date + 1 s), so the skew
 * lies in (date − receivedAt, date + 1 s − sentAt). The bounds of every sample are intersected; when they no longer
 * meet (a clock was stepped during the run), the latest sample alone stands.
 */
export class SkewMeter {
  #low = Number.NEGATIVE_INFINITY;
  #high = Number.POSITIVE_INFINITY;
  #samples = 0;

  add(s: ClockSample): void {
    const low = s.date - s.receivedAt;
    const high = s.date + 1000 - s.sentAt;
    if (Math.max(low, this.#low) > Math.min(high, this.#high)) {
      this.#low = low;
      this.#high = high;
    } else {
      this.#low = Math.max(low, this.#low);
      this.#high = Math.min(high, this.#high);
    }
    this.#samples++;
  }

  /** The skew in ms (the middle of what the samples allow), or null when no response carried a `Date`. */
  estimate(): number | null {
    return this.#samples === 0 ? null : Math.round((this.#low + this.#high) / 2);
  }
}

/** A skew under this is the `Date` header's resolution and the network's delay, not a clock to look at. */
export const NOTABLE_SKEW_MS = 5000;

/** "5 min 2 s behind this server's", or null when the clocks agree within NOTABLE_SKEW_MS. */
export function describeSkew(skewMs: number | null | undefined): string | null {
  if (skewMs == null || Math.abs(skewMs) < NOTABLE_SKEW_MS) return null;
  const s = Math.round(Math.abs(skewMs) / 1000);
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const parts = [
    d > 0 ? `${d} d` : '',
    h > 0 ? `${h} h` : '',
    m > 0 ? `${m} min` : '',
    s % 60 > 0 ? `${s % 60} s` : '',
  ];
  return `${parts.filter((p) => p !== '').join(' ')} ${skewMs < 0 ? 'behind' : 'ahead of'} this server's`;
}

/** What a skew means for what is read: by the upstream's clock, or (a `Date` not trusted, see trusted) whole. */
export function skewConsequence(skewMs: number): string {
  return skewMs > MAX_AHEAD_MS
    ? 'a clock a day or more ahead is not trusted: what is new is read whole'
    : "what is new is read by the upstream's clock";
}

/**
 * How long a measure of the upstream's clock stands in for answers that carry no `Date`: clocks drift by seconds
 * a day, which the pull's overlap (minutes) absorbs; a step of the clock shows on the next answer with a `Date`.
 */
export const CLOCK_MEMORY_MS = 3_600_000;

/**
 * What this process last measured of one upstream's clock, from a trusted `Date`: for a listing answered without
 * one (a proxy in front of one path strips it), the upstream's time is still its own clock, as measured on its
 * other answers, never this server's.
 */
export class ClockMemory {
  #low: number | null = null;
  #at = 0;
  /** Whether the process has said that the upstream sends answers without a `Date` (once per school). */
  warned = false;

  /** A trusted sample: the skew is at least `date − receivedAt` (the answer was made before it arrived). */
  note(s: ClockSample): void {
    this.#low = s.date - s.receivedAt;
    this.#at = s.receivedAt;
  }

  /** The earliest the upstream's clock read at this server's instant `at`, or null with no recent measure. */
  upstreamAt(at: number): number | null {
    if (this.#low === null || Math.abs(at - this.#at) > CLOCK_MEMORY_MS) return null;
    return at + this.#low;
  }
}
