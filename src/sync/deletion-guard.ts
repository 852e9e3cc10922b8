// The deletion guard: an upstream listing is evidence that records are gone only when it looks like the whole
// truth. An empty listing, or one that would delete more than a fraction of what we hold, is far more often an
// upstream fault (a permission change, a bad filter, an outage answering 200 with nothing) than a real mass
// deletion, and acting on it would wipe feeds and pushed calendars. So the guard refuses, and a person looks.

export interface GuardInput {
  resource: string;
  /** Live ids the store holds (within the window, for windowed kinds). */
  storedCount: number;
  /** Records the full listing returned (including skipped malformed ones with a known id). */
  listedCount: number;
  /** Stored ids absent from the listing. */
  missingCount: number;
  /** Fraction of the stored records a single run may delete (0.3 = 30 %). */
  maxShrinkFraction: number;
}

export type GuardVerdict = { allowed: true } | { allowed: false; reason: string };

export function deletionGuard(input: GuardInput): GuardVerdict {
  const { resource, storedCount, listedCount, missingCount, maxShrinkFraction } = input;
  if (missingCount === 0) return { allowed: true };
  if (listedCount === 0) {
    return {
      allowed: false,
      reason: `${resource}: the full listing came back empty while the store holds ${storedCount}; deleted nothing`,
    };
  }
  const fraction = missingCount / storedCount;
  if (fraction > maxShrinkFraction) {
    const pct = (x: number) => `${Math.round(x * 1000) / 10} %`;
    return {
      allowed: false,
      reason:
        `${resource}: the full listing would delete ${missingCount} of ${storedCount} stored (${pct(fraction)}, ` +
        `more than the ${pct(maxShrinkFraction)} allowed); deleted nothing`,
    };
  }
  return { allowed: true };
}
