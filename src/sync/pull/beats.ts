// Each incremental resource's beat: how often a scheduled incremental pull reads it (issue 46, "twice as fresh for
// the same cost"). Sessions change most and are read at every fire; absences and teams change a few times a day
// and are read on a slower beat (school.pull.beatSeconds), so the fires can come often without costing the upstream
// more. A resource's last read is kept as a mark in the store beside its cursor, moved in the same transaction:
// any replica's next fire sees it. The mark is pacing, not "what is new" (the cursor says that), so it is taken
// from the fire's time on this server's clock: fires are exact multiples of the schedule's interval, and a read
// timed from a pull's start (a few ms after its fire) would fall one fire late at every beat.
import type { SchoolConfig } from '../../config.ts';
import type { ResourceKind } from '../../store/types.ts';
import { RESOURCES, type ResourceSpec } from '../resources.ts';
import type { Listed } from './judge-listing.ts';
import type { ResourceRunContext } from './types.ts';

const readKey = (kind: ResourceKind) => `readAt:${kind}`;

/** The least seconds between two incremental reads of a resource (0: at every incremental pull). */
export function beatSeconds(school: SchoolConfig, kind: ResourceKind): number {
  const beats: Partial<Record<ResourceKind, number>> = school.pull.beatSeconds;
  return beats[kind] ?? 0;
}

/** Whether a scheduled incremental pull fired at `at` reads the resource, or lets it wait for its beat. */
export function beatDue(
  cursors: ReadonlyMap<string, string>,
  school: SchoolConfig,
  kind: ResourceKind,
  at: Date,
): boolean {
  const beat = beatSeconds(school, kind);
  if (beat <= 0) return true;
  const read = cursors.get(readKey(kind));
  if (!read) return true;
  const elapsed = at.getTime() - Date.parse(read);
  // A mark in the future (a clock set back, a replica's clock ahead) is not trusted to hold a read back.
  return elapsed < 0 || elapsed >= beat * 1000;
}

/**
 * After a resource's listing was written whole (incremental or full): its beat starts again from this run. The
 * mark goes into `marks`, which advanceCursors writes with the resource's cursors.
 */
export function markRead(
  marks: Map<string, string>,
  ctx: ResourceRunContext,
  spec: ResourceSpec,
  listed: Listed,
): void {
  // A listing that may have left some out is read again at the next fire, like its cursor.
  if (!spec.incremental || listed.incomplete) return;
  marks.set(readKey(spec.kind), ctx.beatAt.toISOString());
}

/**
 * What an idle school's scheduled incremental pulls, fired every `fireMs`, cost its upstream a minute: each
 * incremental resource's listings, at the first fire its beat allows. Reference data (every
 * referenceRefreshMinutes) and the full pull come on top.
 */
export function idleRequestsPerMinute(school: SchoolConfig, fireMs: number): number {
  let perMinute = 0;
  for (const spec of RESOURCES) {
    if (!spec.incremental) continue;
    const fires = Math.max(1, Math.ceil((beatSeconds(school, spec.kind) * 1000) / fireMs));
    perMinute += (spec.listings.length * 60_000) / (fires * fireMs);
  }
  return perMinute;
}
