// The third stage (→ Listed): where a reconciliation is due, our events in the remote calendar listed. A failed
// listing pauses, skips or fails its calendar (and a calendar found gone is forgotten after the run).
import type { Instant } from '../domain/types.ts';
import type { PushContext } from './context.ts';
import type { Ensured } from './ensure.ts';
import { pauseCalendar } from './pause.ts';
import { PENDING } from './plan.ts';
import type { ListResult, RemoteEvent } from './provider.ts';
import { STATE_AFTER, withFailure } from './summary.ts';

/** A calendar as compared with the remote this run, or not. */
export interface Listed extends Ensured {
  /** Our events in the calendar when it was listed this run; null when it was not. */
  readonly listing: readonly RemoteEvent[] | null;
}

type ListContext = Pick<
  PushContext,
  'store' | 'schoolId' | 'targetId' | 'provider' | 'dryRun' | 'clock' | 'pauseMinutes' | 'note' | 'reached'
>;

/** Which calendars are listed: all of them (`reconcileAll`), or those due (see dueForListing). */
export interface ListingDue {
  reconcileAll: boolean;
  /** A calendar last reconciled before this is due. */
  dueBefore: Instant;
}

/**
 * Whether a calendar is compared with the remote this run: always when asked, else when its mappings are
 * missing or pending (a lost database, a crash mid-push) or it was not reconciled for reconcileEveryHours.
 */
export function dueForListing(c: Ensured, due: ListingDue): boolean {
  if (!c.ref || c.fresh || !c.ref.remoteCalendarId) return false;
  if (c.outcome.state !== 'ok' && c.outcome.state !== 'retired') return false;
  if (due.reconcileAll) return true;
  if (c.mappings.size === 0 && c.desired.size > 0) return true;
  if ([...c.mappings.values()].some((m) => m.contentHash === PENDING)) return true;
  return !c.stored?.lastReconciledAt || c.stored.lastReconciledAt < due.dueBefore;
}

/** Lists our events in each calendar due; the others pass through unlisted. */
export async function listCalendars(
  ctx: ListContext,
  ensured: readonly Ensured[],
  due: ListingDue,
  window: { from: Instant; to: Instant },
): Promise<Listed[]> {
  const toList = ensured.filter((c) => dueForListing(c, due));
  const listings = toList.length
    ? await ctx.provider.listOwned(
        toList.map((c) => c.ref!),
        window,
      )
    : new Map<string, ListResult>();
  // An empty answer where we hold no mapping (a lost database, or a calendar found rather than created) is
  // asked for a second time before it is believed: a flaky empty listing would otherwise mean re-creating
  // every event (harmless on Google, whose ids are ours; on Graph only transactionId would stand in the way).
  const doubtful = toList.filter((c) => {
    const r = listings.get(c.spec.key);
    return r?.ok && r.events.length === 0 && c.mappings.size === 0 && c.desired.size > 0;
  });
  if (doubtful.length) {
    const second = await ctx.provider.listOwned(
      doubtful.map((c) => c.ref!),
      window,
    );
    for (const [key, r] of second) listings.set(key, r);
  }
  const listedNow = new Set(toList);
  const out: Listed[] = [];
  for (const c of ensured) {
    const r = listedNow.has(c) ? listings.get(c.spec.key) : undefined;
    out.push(r ? await listed(ctx, c, r) : { ...c, listing: null });
  }
  return out;
}

async function listed(ctx: ListContext, c: Ensured, r: ListResult): Promise<Listed> {
  if (r.ok) return { ...c, listing: r.events };
  // Refused credentials or permission (401, 403), a 5xx that outlasted the backoff: the calendar could not be
  // compared with the remote, so nothing is written to it and the run fails, naming the cause.
  const outcome = { ...withFailure({ ...c.outcome, state: STATE_AFTER[r.kind] }, r.kind), note: r.reason };
  ctx.reached(outcome);
  if (r.kind === 'quota' && !ctx.dryRun) await pauseCalendar(ctx, c);
  ctx.note(`${c.spec.key}: remote listing failed: ${r.reason}`);
  return { ...c, outcome, listing: null };
}
