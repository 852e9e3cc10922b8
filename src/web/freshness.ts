// "Updated 5 minutes ago from the school's system": when rostercal last read the school's data successfully.
import type { SchoolId, Store } from '../store/types.ts';

/** When the last successful pull (full or incremental) of a school finished; null when none has. */
export async function lastPulledAt(store: Pick<Store, 'runs'>, schoolId: SchoolId): Promise<Date | null> {
  const runs = await store.runs.listRuns(schoolId, { limit: 50 });
  const ok = runs.find((r) => r.kind !== 'push' && r.status === 'succeeded' && r.finishedAt);
  return ok?.finishedAt ? new Date(ok.finishedAt) : null;
}

/** "just now", "1 minute ago", "5 minutes ago", "2 hours ago", "3 days ago". */
export function ago(then: Date, now: Date): string {
  const s = Math.max(0, Math.round((now.getTime() - then.getTime()) / 1000));
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'} ago`;
  if (s < 60) return 'just now';
  if (s < 3600) return unit(Math.floor(s / 60), 'minute');
  if (s < 86_400) return unit(Math.floor(s / 3600), 'hour');
  return unit(Math.floor(s / 86_400), 'day');
}
