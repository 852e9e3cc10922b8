// Which stored records a listing shows gone, as far as it may: a full listing the guard trusts, confirmed by a
// single read's 404 or by a second complete listing in a row; then the deletions applied.
import type { Id } from '../../domain/types.ts';
import type { ResourceKind, Store } from '../../store/types.ts';
import { deletionGuard } from '../deletion-guard.ts';
import type { ResourceSpec } from '../resources.ts';
import { missingFrom } from './confirm-missing.ts';
import type { Confirmation, Gathered } from './gathered.ts';
import type { Listed } from './judge-listing.ts';
import type { ResourceRunContext } from './types.ts';

/** What the resource's turn will do about records the listing left out. */
export interface Planned {
  /** Marked deleted. */
  remove: Id[];
  /** The resource's "left out once" marks as they are to be after this turn, or null: left as they are. */
  marks: Id[] | null;
  /** Left out for the first time by this complete full listing (no single read to ask): kept until the next. */
  pending: number;
  /** Records that may be gone were kept because the listing or the guard could not be trusted. */
  guarded: boolean;
  warning: string | null;
}

/** A single read's answer that removes the record whatever the marks say. */
const confirmedGone = (said: Confirmation | undefined) => said === 'gone' || said === 'elsewhere';

/** What to do with the records a complete full listing left out (and the guard allows deleting). */
function decideMissing(
  missing: readonly Id[],
  confirmations: Gathered['confirmations'],
  marks: ReadonlyMap<Id, string>,
): { remove: Id[]; pending: Id[]; present: Id[] } {
  const remove: Id[] = [];
  const pending: Id[] = [];
  const present: Id[] = [];
  for (const id of missing) {
    const said = confirmations.get(id);
    // Gone (404), or moved out of what is synced: it leaves the store, as upstream confirms.
    if (confirmedGone(said)) remove.push(id);
    else if (said === 'present' || said === 'unasked') present.push(id);
    // No single read to ask, or it gave no answer: the second complete listing in a row that leaves it out decides.
    else if (marks.has(id)) remove.push(id);
    else pending.push(id);
  }
  return { remove, pending, present };
}

/** A few ids for a person to look up, and how many more. */
function someIds(ids: readonly Id[]): string {
  return ids.slice(0, 10).join(', ') + (ids.length > 10 ? ` … and ${ids.length - 10} more` : '');
}

/** Records the listing left out that the upstream, read singly, still has (or was not asked about). */
function keptWarning(
  kind: ResourceKind,
  present: Id[],
  confirmations: Gathered['confirmations'],
): string | null {
  if (present.length === 0) return null;
  const asked = present.filter((id) => confirmations.get(id) === 'present');
  return (
    `${kind}: the full listing left out ${present.length} record${present.length === 1 ? '' : 's'}` +
    (asked.length === present.length
      ? ` the upstream still has (read singly: ${someIds(present)}); kept`
      : `; the first ${asked.length} read singly are all still there (${someIds(asked)}), so the ` +
        'listing was not trusted: kept them all')
  );
}

export async function detectDeletions(
  tx: Pick<Store, 'records'>,
  ctx: ResourceRunContext,
  spec: ResourceSpec,
  got: Gathered,
  listed: Listed,
  full: boolean,
): Promise<Planned> {
  // Records a complete listing left out once (kinds without a single read): a record seen since is no longer.
  // Read at the run's start and not again, deletions that rest on them included: only the pull holding the
  // school's lease writes them, and a pull that lost it writes nothing (store/lease-fence.ts). test/sync/stale-marks
  // plays both orders with real stalled pulls: the stalled pull's marks gone stale, and its late sighting under the
  // feet of a full pull holding the lease.
  const marks = ctx.marks.get(spec.kind) ?? (await tx.records.listMissing(ctx.school.id, spec.kind));
  const marksSeen = [...marks.keys()].some((id) => got.seen.has(id));
  const keep: Planned = {
    remove: [],
    marks: marksSeen ? [...marks.keys()].filter((id) => !got.seen.has(id)) : null,
    pending: 0,
    guarded: false,
    warning: null,
  };
  const { problems, incomplete } = listed;
  if (!full) {
    if (problems.length === 0) return keep;
    const again = incomplete ? '; will read these changes again' : '';
    return { ...keep, warning: `${spec.kind}: ${problems.join('; ')}${again}` };
  }
  const { storedCount, missing } = await missingFrom(tx, ctx, spec, got);
  // Ids we could not see may be any of the "missing" ones: the listing is no evidence of deletion.
  if (listed.untrusted)
    return {
      ...keep,
      guarded: missing.length > 0,
      warning: `${spec.kind}: ${problems.join('; ')}; deleted nothing`,
    };
  const verdict = deletionGuard({
    resource: spec.kind,
    storedCount,
    listedCount: got.seen.size,
    missingCount: missing.length,
    maxShrinkFraction: ctx.school.deletionGuard.maxShrinkFraction,
  });
  if (!verdict.allowed) return { ...keep, guarded: true, warning: verdict.reason };
  // One listing's word is not enough: a record goes when a single read answers 404, or when this is the
  // second complete listing in a row to leave it out (see decideMissing).
  const { remove, pending, present } = decideMissing(missing, got.confirmations, marks);
  return {
    remove,
    marks: pending.length > 0 || marks.size > 0 ? pending : null,
    pending: pending.length,
    guarded: false,
    warning: keptWarning(spec.kind, present, got.confirmations),
  };
}

/** Marks the planned records deleted and sets the marks; resolves to how many were deleted. */
export async function applyDeletions(
  tx: Pick<Store, 'records'>,
  schoolId: string,
  kind: ResourceKind,
  planned: Planned,
  at: string,
): Promise<number> {
  const deleted =
    planned.remove.length > 0 ? await tx.records.markDeleted(schoolId, kind, planned.remove, at) : 0;
  if (planned.marks) await tx.records.setMissing(schoolId, kind, planned.marks, at);
  return deleted;
}
