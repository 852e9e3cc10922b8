// Single reads of the records a complete full listing left out: only a 404 proves one gone.
import type { Id } from '../../domain/types.ts';
import type { Store } from '../../store/types.ts';
import { UnreachableError } from '../../upstream/errors.ts';
import { mapLimit } from '../../util/concurrency.ts';
import { deletionGuard } from '../deletion-guard.ts';
import type { ResourceSpec } from '../resources.ts';
import { isNotFound, message } from './errors.ts';
import type { Confirmation, Gathered } from './gathered.ts';
import { anyListingGap } from './judge-listing.ts';
import type { ResourceRunContext } from './types.ts';

/**
 * Single reads that all find the record there: the listing, not the records, is at fault, and asking about the
 * rest would only cost requests (a listing short of a whole page would cost a read per record of it).
 */
const UNTRUSTED_AFTER = 20;

/**
 * Ids the store holds live (within the window, for windowed kinds) that the listing did not return, and how many
 * it holds. None, without a read, when the listing returned every record the store held live as its download
 * began (Gathered.allSeen): what is live since was written by this pull from the listing itself, or by a
 * family's act the listing could not yet hold, which must not count as missing anyway. A first pull, and an
 * unchanged full one of a kind without a window, then make no read of every id.
 */
export async function missingFrom(
  store: Pick<Store, 'records'>,
  ctx: ResourceRunContext,
  spec: ResourceSpec,
  got: Pick<Gathered, 'seen' | 'allSeen'>,
): Promise<{ storedCount: number; missing: Id[] }> {
  if (got.allSeen) return { storedCount: got.seen.size, missing: [] };
  const live = await store.records.liveIds(ctx.school.id, spec.kind, spec.windowed ? ctx.window : undefined);
  return { storedCount: live.length, missing: live.filter((id) => !got.seen.has(id)) };
}

/**
 * Asks the upstream, one single read each, about every record a complete full listing left out (within what the
 * deletion guard lets it delete): only a 404 proves one gone. A listing that cannot be the whole truth, or that the
 * guard refuses, deletes nothing, so nothing is asked.
 */
export async function confirmMissing(
  ctx: ResourceRunContext,
  spec: ResourceSpec & Required<Pick<ResourceSpec, 'confirm'>>,
  out: Gathered,
  noteError: (line: string) => void,
): Promise<void> {
  if (out.unknownSkipped > 0 || anyListingGap(out)) return;
  const { storedCount, missing } = await missingFrom(ctx.store, ctx, spec, out);
  if (missing.length === 0) return;
  const verdict = deletionGuard({
    resource: spec.kind,
    storedCount,
    listedCount: out.seen.size,
    missingCount: missing.length,
    maxShrinkFraction: ctx.school.deletionGuard.maxShrinkFraction,
  });
  if (!verdict.allowed) return;
  const unknown: string[] = [];
  const tally = { present: 0, gone: 0 };
  await mapLimit(missing, ctx.school.pull.teamConcurrency, async (id) => {
    if (tally.present >= UNTRUSTED_AFTER && tally.gone === 0) {
      out.confirmations.set(id, 'unasked');
      return;
    }
    const said = await askOne(ctx, spec, id, unknown);
    if (said === 'present') tally.present++;
    if (said === 'gone') tally.gone++;
    out.confirmations.set(id, said);
  });
  if (unknown.length > 0)
    noteError(
      `${spec.kind}: ${unknown.length} record${unknown.length === 1 ? '' : 's'} the full listing left out could not be ` +
        `read singly, kept until a second full listing leaves them out too: ${unknown.slice(0, 5).join('; ')}` +
        (unknown.length > 5 ? ` … and ${unknown.length - 5} more` : ''),
    );
}

async function askOne(
  ctx: ResourceRunContext,
  spec: Required<Pick<ResourceSpec, 'confirm'>>,
  id: Id,
  unknown: string[],
): Promise<Confirmation> {
  try {
    return await spec.confirm({ client: ctx.client, window: ctx.window }, id);
  } catch (err) {
    // The service went away mid-pull: the resource fails like any download. A refusal of the single read
    // (401/403, a token allowed to list only) just leaves the question open.
    if (err instanceof UnreachableError) throw err;
    if (isNotFound(err)) return 'gone';
    unknown.push(`${id} (${message(err)})`);
    return 'unknown';
  }
}
