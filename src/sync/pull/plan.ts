// How each resource is read this time: whole, only what changed since its cursor, or not at all (reference data
// not yet due for a re-read; on a scheduled pull, an incremental resource whose beat has not come round, beats.ts).
import type { SchoolConfig } from '../../config.ts';
import type { PullKind, ResourceMode } from '../../jobs/pull-summary.ts';
import { MAX_AHEAD_MS } from '../../upstream/clock.ts';
import { RESOURCES, type ResourceSpec } from '../resources.ts';
import { beatDue } from './beats.ts';
import { sensitiveChangedIn } from './sensitive.ts';
import { cursorKey, type PlannedResource, refreshKey } from './types.ts';

function decideMode(
  cursors: ReadonlyMap<string, string>,
  school: SchoolConfig,
  spec: ResourceSpec,
  runKind: PullKind,
  now: Date,
  beatsFrom: Date | null,
): { mode: ResourceMode; updatedAfter?: string } {
  if (runKind === 'full') return { mode: 'full' };
  // Sensitive rosters turned on or off since the teams were stored: every team is read (and rewritten) again.
  if (spec.kind === 'teams' && sensitiveChangedIn(cursors, school)) return { mode: 'full' };
  if (spec.incremental) {
    const cursor = cursors.get(cursorKey(spec.kind));
    // No cursor: this resource never completed a listing; read it whole.
    if (!cursor) return { mode: 'full' };
    // A cursor that is no date, or lies a day past this server's clock (left by a lying `Date` before it was
    // checked), asks from the future or is refused with 400 at every pull: read whole, which resets it.
    const at = Date.parse(cursor);
    if (Number.isNaN(at) || at > now.getTime() + MAX_AHEAD_MS) return { mode: 'full' };
    if (beatsFrom && !beatDue(cursors, school, spec.kind, beatsFrom)) return { mode: 'skipped' };
    return { mode: 'incremental', updatedAfter: cursor };
  }
  const refreshed = cursors.get(refreshKey(spec.kind));
  const due =
    !refreshed || now.getTime() - Date.parse(refreshed) >= school.pull.referenceRefreshMinutes * 60_000;
  return { mode: due ? 'full' : 'skipped' };
}

/**
 * Every resource, in RESOURCES' order, with how this run reads it, from the school's cursors (every one, read in
 * one statement at the run's start: Store.records.pullState). `beatsFrom`: a scheduled pull's fire, from which
 * incremental resources' beats are timed; null (`rostercal sync`) reads every incremental resource.
 */
export function planResources(
  cursors: ReadonlyMap<string, string>,
  school: SchoolConfig,
  runKind: PullKind,
  startedAt: Date,
  beatsFrom: Date | null = null,
): PlannedResource[] {
  return RESOURCES.map((spec) => ({
    spec,
    ...decideMode(cursors, school, spec, runKind, startedAt, beatsFrom),
  }));
}
