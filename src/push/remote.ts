// What the remote holds, the steps between gathering and planning: each calendar found or created (and its id
// remembered), then — where a reconciliation is due — our events in it listed.
import type { Instant } from '../domain/types.ts';
import type { PushCalendar, SchoolId, Store } from '../store/types.ts';
import { encodeCalendarId } from './calendar-id.ts';
import type { CalendarWork } from './gather.ts';
import { PENDING } from './plan.ts';
import type { ListResult, PushProvider } from './provider.ts';
import { noteFailure, STATE_AFTER } from './summary.ts';

export interface RemoteStep {
  store: Pick<Store, 'push'>;
  schoolId: SchoolId;
  targetId: string;
  provider: PushProvider;
  dryRun: boolean;
  startedAt: Instant;
  note: (msg: string) => void;
  /** Rests a calendar whose provider said quota exceeded (see apply.ts). */
  pause: (w: CalendarWork) => Promise<void>;
}

/** Finds or creates every calendar still to be written (none created in a dry run). */
export async function ensureCalendars(step: RemoteStep, works: CalendarWork[]): Promise<void> {
  const toEnsure = works.filter((w) => w.outcome.state === 'ok');
  const ensured = await step.provider.ensureCalendars(
    toEnsure.map((w) => w.spec),
    { dryRun: step.dryRun },
  );
  for (const w of toEnsure) {
    const r = ensured.get(w.spec.key);
    if (!r?.ok) {
      w.outcome.state = r ? STATE_AFTER[r.kind] : 'failed';
      if (r) noteFailure(w.outcome, r.kind);
      w.outcome.note = r?.reason ?? 'not ensured';
      step.note(r?.reason ?? `${w.spec.key}: calendar not available`);
      continue;
    }
    w.ref = { key: w.spec.key, remoteCalendarId: r.remoteCalendarId, owner: w.spec.owner };
    w.outcome.remoteCalendarId = r.remoteCalendarId || null;
    w.retire = r.retire ?? [];
    if (r.created) {
      w.outcome.state = 'created';
      w.fresh = true;
    }
    const encoded = encodeCalendarId(w.spec.owner, r.remoteCalendarId);
    // The mappings speak of another calendar (a replaced public one): the kept one is compared afresh.
    if (
      w.mappings.size &&
      (r.created || (w.spec.generation !== undefined && encoded !== w.stored?.remoteCalendarId))
    ) {
      if (!step.dryRun)
        await step.store.push.deletePushMappings(step.schoolId, step.targetId, w.spec.key, [
          ...w.mappings.keys(),
        ]);
      w.mappings = new Map();
    }
    if (!step.dryRun && encoded !== (w.stored?.remoteCalendarId ?? null)) {
      const saved: PushCalendar = {
        schoolId: step.schoolId,
        target: step.targetId,
        calendarKey: w.spec.key,
        remoteCalendarId: encoded,
        pausedUntil: null,
        // A calendar we just created holds nothing: as good as reconciled. One found in its place is listed.
        lastReconciledAt: r.created
          ? step.startedAt
          : encoded === w.stored?.remoteCalendarId
            ? (w.stored?.lastReconciledAt ?? null)
            : null,
      };
      await step.store.push.savePushCalendar(saved);
      w.stored = saved;
    }
  }
}

/**
 * The calendars to compare with the remote this run: all of them when asked, else those whose mappings are
 * missing or pending (a lost database, a crash mid-push) and those not reconciled for reconcileEveryHours.
 */
export function dueForListing(
  works: CalendarWork[],
  reconcileAll: boolean,
  dueBefore: Instant,
): CalendarWork[] {
  return works.filter((w) => {
    if (!w.ref || w.fresh || !w.ref.remoteCalendarId) return false;
    if (w.outcome.state !== 'ok' && w.outcome.state !== 'retired') return false;
    if (reconcileAll) return true;
    if (w.mappings.size === 0 && w.desired.size > 0) return true;
    if ([...w.mappings.values()].some((m) => m.contentHash === PENDING)) return true;
    return !w.stored?.lastReconciledAt || w.stored.lastReconciledAt < dueBefore;
  });
}

/** Lists our events in each calendar (into work.listing); a failed listing pauses, skips or fails it (and forgets a gone one). */
export async function listCalendars(
  step: RemoteStep,
  toList: CalendarWork[],
  window: { from: Instant; to: Instant },
): Promise<void> {
  const listings = toList.length
    ? await step.provider.listOwned(
        toList.map((w) => w.ref!),
        window,
      )
    : new Map<string, ListResult>();
  // An empty answer where we hold no mapping (a lost database, or a calendar found rather than created) is
  // asked for a second time before it is believed: a flaky empty listing would otherwise mean re-creating
  // every event (harmless on Google, whose ids are ours; on Graph only transactionId would stand in the way).
  const doubtful = toList.filter((w) => {
    const r = listings.get(w.spec.key);
    return r?.ok && r.events.length === 0 && w.mappings.size === 0 && w.desired.size > 0;
  });
  if (doubtful.length) {
    const second = await step.provider.listOwned(
      doubtful.map((w) => w.ref!),
      window,
    );
    for (const [key, r] of second) listings.set(key, r);
  }
  for (const w of toList) {
    const r = listings.get(w.spec.key);
    if (!r) continue;
    if (r.ok) {
      w.listing = r.events;
      continue;
    }
    // Refused credentials or permission (401, 403), a 5xx that outlasted the backoff: the calendar could not be
    // compared with the remote, so nothing is written to it and the run fails, naming the cause.
    w.outcome.state = STATE_AFTER[r.kind];
    noteFailure(w.outcome, r.kind);
    if (r.kind === 'quota') await step.pause(w);
    w.outcome.note = r.reason;
    step.note(`${w.spec.key}: remote listing failed: ${r.reason}`);
  }
}
