// The store side of a resource's turn, last step: its cursors move with the data, in the same transaction, so a
// failed resource is simply read again next time, and so is an incomplete listing of changes (it may have left
// some out). A resource with nothing else to write has no transaction: its cursors wait for the next one, or the
// run's end (pull-resource.ts, DeferredCursors), and all of them go in one statement.
//
// The `updatedAfter` cursor is on the upstream's clock, the one its records' updatedAt are stamped on: the
// earliest `Date` of the listing's pages, less the overlap. A change the listing could have missed was stamped
// after the page that would have carried it was made, so after that instant. This server's clock played no part:
// with it 5 minutes ahead of the upstream's, the cursor (its run start less 120 s) lay 3 minutes in the upstream's
// future and every edit made in the 3 minutes after a pull was never read (issue 41). A listing without a `Date`
// to trust takes the upstream's clock as measured on its other answers (clock-memory.ts), never this server's;
// with nothing measured, its cursor stays (nextCursor).
//
// A cursor that lay after the listing's own time (the upstream's clock went back by more than the overlap, or the
// cursor was written by this server's clock before issue 41) asked from the upstream's future: what was stamped
// before it and after the last good listing was never listed. The resource is then read whole next time (a cursor
// at the epoch), rather than trusting a listing that could not hold those changes.
import type { ResourceMode } from '../../jobs/pull-summary.ts';
import type { Store } from '../../store/types.ts';
import type { ResourceSpec } from '../resources.ts';
import { markRead } from './beats.ts';
import { clockMemoryOf } from './clock-memory.ts';
import type { Gathered } from './gathered.ts';
import type { Listed } from './judge-listing.ts';
import { SENSITIVE_KEY, sensitiveChanged, sensitiveMark, withoutSensitive } from './sensitive.ts';
import { cursorKey, type ResourceRunContext, refreshKey } from './types.ts';

/** A cursor before every record: the next incremental read lists the resource whole. */
const EPOCH = new Date(0).toISOString();

/**
 * The resource's cursors and its beat's mark (beats.ts) as they are to be after this listing, sensitive rosters
 * aside (advanceCursors).
 */
export function cursorsAfter(
  ctx: ResourceRunContext,
  spec: ResourceSpec,
  mode: ResourceMode,
  listed: Listed,
  got: Gathered,
): Map<string, string> {
  const next = new Map<string, string>();
  if (spec.incremental && !listed.incomplete) next.set(cursorKey(spec.kind), nextCursor(ctx, spec, got));
  if (mode === 'full') next.set(refreshKey(spec.kind), ctx.startedAt.toISOString());
  markRead(next, ctx, spec, listed);
  return next;
}

/**
 * Writes the resource's cursors (cursorsAfter) in one statement with `deferred`, the cursors of earlier resources
 * of the run that had nothing else to write (pull-resource.ts); a full read of teams after sensitive rosters were
 * turned off strips the teams it did not rewrite, and marks the teams as stored without them.
 */
export async function advanceCursors(
  tx: Pick<Store, 'records'>,
  ctx: ResourceRunContext,
  spec: ResourceSpec,
  mode: ResourceMode,
  listed: Listed,
  got: Gathered,
  deferred: ReadonlyMap<string, string>,
): Promise<void> {
  const { school } = ctx;
  const next = new Map([...deferred, ...cursorsAfter(ctx, spec, mode, listed, got)]);
  if (spec.kind === 'teams' && mode === 'full' && (await sensitiveChanged(tx, school))) {
    // Turned off: the listing rewrote every live team it returned whole; teams deleted upstream, and those it
    // served malformed, keep their last record here, so strip those as well (and read no other).
    if (!school.rosters.sensitive) {
      const written = new Set([...got.seen].filter((id) => !got.malformed.has(id)));
      await tx.records.rewriteRecords(school.id, 'teams', withoutSensitive, written);
    }
    next.set(SENSITIVE_KEY, sensitiveMark(school));
  }
  // As the transaction commits: with its data version (and the run's progress), one statement on PostgreSQL.
  await tx.records.setCursors(school.id, next, { atCommit: true });
}

/**
 * The cursor a complete listing leaves. Without a `Date` to trust (none, not a date, a day or more ahead of this
 * server's clock) the listing's time is the upstream's clock as this process last measured it on its other
 * answers, when it has (so an incremental read stays incremental: 3 sessions read a fire, not 131). With nothing
 * measured, nothing says what the upstream's time was, and this server's clock may be ahead of it: the cursor
 * stays where it was, or at the epoch after a whole listing, so the resource is read whole rather than an edit
 * being lost (an upstream stripped of its `Date` lost every edit made in the 3 minutes after a pull with this
 * server 5 minutes ahead; one sending `Date: 99999` left a cursor every later listing refused with 400).
 */
function nextCursor(ctx: ResourceRunContext, spec: ResourceSpec, got: Gathered): string {
  const { askedAfter } = got;
  let { listedAt } = got;
  if (listedAt === null) {
    const memory = clockMemoryOf(ctx.client);
    listedAt = memory.upstreamAt(got.askedAt);
    if (!memory.warned) {
      // Once per school per process: the same answer comes every fire, and the operator's fix is one proxy.
      memory.warned = true;
      ctx.log.warn(
        { resource: spec.kind },
        listedAt === null
          ? `the upstream answers without a Date header to trust (first seen on ${spec.kind}), and nothing has measured its clock: such resources are read whole on every pull until it sends one (a proxy in front of it may strip the header)`
          : `the upstream answers ${spec.kind} without a Date header to trust (a proxy in front of it may strip the header): their cursors follow its clock as measured on its other answers`,
      );
    }
    if (listedAt === null) return askedAfter ?? EPOCH;
  }
  if (askedAfter !== null && Date.parse(askedAfter) > listedAt) {
    ctx.log.warn(
      { resource: spec.kind, cursor: askedAfter, upstreamTime: new Date(listedAt).toISOString() },
      `the ${spec.kind} cursor lay after the upstream's time: its clock went back, or this server's clock set the cursor; ${spec.kind} are read whole next time`,
    );
    return EPOCH;
  }
  return new Date(Math.max(0, listedAt - ctx.school.pull.overlapSeconds * 1000)).toISOString();
}
