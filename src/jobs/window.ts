// The slice of time a school's sessions and absences are kept for: `daysBack` before now to `daysAhead` after.
import type { Instant } from '../domain/types.ts';

const DAY_MS = 86_400_000;

export interface SyncWindow {
  from: Instant;
  to: Instant;
}

export function syncWindow(now: Date, opts: { daysBack: number; daysAhead: number }): SyncWindow {
  // Whole UTC minutes: the same run asks upstream and the store for exactly the same bounds.
  const t = Math.floor(now.getTime() / 60_000) * 60_000;
  return {
    from: new Date(t - opts.daysBack * DAY_MS).toISOString(),
    to: new Date(t + opts.daysAhead * DAY_MS).toISOString(),
  };
}
