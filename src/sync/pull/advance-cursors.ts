// The store side of a resource's turn, last step: its cursors move with the data, in the same transaction, so a
// failed resource is simply read again next time, and so is an incomplete listing of changes (it may have left
// some out).
//
// The `updatedAfter` cursor is on the upstream's clock, the one its records' updatedAt are stamped on: the
// earliest `Date` of the listing's pages, less the overlap. A change the listing could have missed was stamped
// after the page that would have carried it was made, so after that instant. This server's clock played no part:
// with it 5 minutes ahead of the upstream's, the cursor (its run start less 120 s) lay 3 minutes in the upstream's
// future and every edit made in the 3 minutes after a pull was never read (issue 41). Only an upstream that
// sends no `Date` is measured against this server's clock, the run's start.
//
// A cursor that lay after the listing's own time (the upstream's clock went back by more than the overlap, or the
// cursor was written by this server's clock before issue 41) asked from the upstream's future: what was stamped
// before it and after the last good listing was never listed. The resource is then read whole next time (a cursor
// at the epoch), rather than trusting a listing that could not hold those changes.
import type { ResourceMode } from '../../jobs/pull-summary.ts';
import type { Store } from '../../store/types.ts';
import type { ResourceSpec } from '../resources.ts';
import type { Gathered } from './gathered.ts';
import type { Listed } from './judge-listing.ts';
import { SENSITIVE_KEY, sensitiveChanged, sensitiveMark, withoutSensitive } from './sensitive.ts';
import { cursorKey, type ResourceRunContext, refreshKey } from './types.ts';

/** A cursor before every record: the next incremental read lists the resource whole. */
const EPOCH = new Date(0).toISOString();

export async function advanceCursors(
  tx: Pick<Store, 'records'>,
  ctx: ResourceRunContext,
  spec: ResourceSpec,
  mode: ResourceMode,
  listed: Listed,
  got: Gathered,
): Promise<void> {
  const { school, startedAt } = ctx;
  const full = mode === 'full';
  if (spec.incremental && !listed.incomplete) {
    const listedAt = got.listedAt ?? startedAt.getTime();
    const future = got.askedAfter !== null && Date.parse(got.askedAfter) > listedAt;
    if (future)
      ctx.log.warn(
        { resource: spec.kind, cursor: got.askedAfter, upstreamTime: new Date(listedAt).toISOString() },
        `the ${spec.kind} cursor lay after the upstream's time: its clock went back, or this server's clock set the cursor; ${spec.kind} are read whole next time`,
      );
    const cursor = future ? EPOCH : new Date(listedAt - school.pull.overlapSeconds * 1000).toISOString();
    await tx.records.setCursor(school.id, cursorKey(spec.kind), cursor);
  }
  if (full) await tx.records.setCursor(school.id, refreshKey(spec.kind), startedAt.toISOString());
  if (spec.kind === 'teams' && full && (await sensitiveChanged(tx, school))) {
    // Turned off: the listing rewrote every live team it returned whole; teams deleted upstream, and those it
    // served malformed, keep their last record here, so strip those as well (and read no other).
    if (!school.rosters.sensitive) {
      const written = new Set([...got.seen].filter((id) => !got.malformed.has(id)));
      await tx.records.rewriteRecords(school.id, 'teams', withoutSensitive, written);
    }
    await tx.records.setCursor(school.id, SENSITIVE_KEY, sensitiveMark(school));
  }
}
