// The second stage (→ Ensured): each calendar still to be written found or created in the remote (none created in
// a dry run), and its id remembered.
import type { PushCalendar } from '../store/types.ts';
import { encodeCalendarId } from './calendar-id.ts';
import type { PushContext } from './context.ts';
import type { Gathered } from './gather.ts';
import type { EnsureResult } from './provider.ts';
import { STATE_AFTER, withFailure } from './summary.ts';

/** A calendar after the remote was asked for it: its ref when it is there (`created` when made this run). */
export interface Ensured extends Gathered {
  /** Created this run: nothing to list. */
  readonly fresh: boolean;
  /** Replaced public calendars (earlier generations, no longer public): deleted once this one is complete. */
  readonly retire: readonly string[];
}

type EnsureContext = Pick<
  PushContext,
  'store' | 'schoolId' | 'targetId' | 'provider' | 'dryRun' | 'startedAt' | 'note' | 'reached'
>;

/** Finds or creates every calendar whose state is `ok`; the others pass through as they were. */
export async function ensureCalendars(ctx: EnsureContext, gathered: readonly Gathered[]): Promise<Ensured[]> {
  const toEnsure = gathered.filter((c) => c.outcome.state === 'ok');
  const ensured = await ctx.provider.ensureCalendars(
    toEnsure.map((c) => c.spec),
    { dryRun: ctx.dryRun },
  );
  const out: Ensured[] = [];
  for (const c of gathered) {
    if (c.outcome.state !== 'ok') {
      out.push({ ...c, fresh: false, retire: [] });
      continue;
    }
    out.push(await ensureOne(ctx, c, ensured.get(c.spec.key)));
  }
  return out;
}

async function ensureOne(ctx: EnsureContext, c: Gathered, r: EnsureResult | undefined): Promise<Ensured> {
  if (!r?.ok) {
    const state = r ? STATE_AFTER[r.kind] : 'failed';
    const failed = r ? withFailure({ ...c.outcome, state }, r.kind) : { ...c.outcome, state };
    const outcome = { ...failed, note: r?.reason ?? 'not ensured' };
    ctx.reached(outcome);
    ctx.note(r?.reason ?? `${c.spec.key}: calendar not available`);
    return { ...c, outcome, fresh: false, retire: [] };
  }
  const { spec } = c;
  const ref = { key: spec.key, remoteCalendarId: r.remoteCalendarId, owner: spec.owner };
  const ensuredOutcome = { ...c.outcome, remoteCalendarId: r.remoteCalendarId || null };
  const outcome = r.created ? { ...ensuredOutcome, state: 'created' as const } : ensuredOutcome;
  ctx.reached(outcome);
  const encoded = encodeCalendarId(spec.owner, r.remoteCalendarId);
  let mappings = c.mappings;
  // The mappings speak of another calendar (a replaced public one): the kept one is compared afresh.
  if (
    mappings.size &&
    (r.created || (spec.generation !== undefined && encoded !== c.stored?.remoteCalendarId))
  ) {
    if (!ctx.dryRun)
      await ctx.store.push.deletePushMappings(ctx.schoolId, ctx.targetId, spec.key, [...mappings.keys()]);
    mappings = new Map();
  }
  let stored = c.stored;
  if (!ctx.dryRun && encoded !== (stored?.remoteCalendarId ?? null)) {
    const saved: PushCalendar = {
      schoolId: ctx.schoolId,
      target: ctx.targetId,
      calendarKey: spec.key,
      remoteCalendarId: encoded,
      pausedUntil: null,
      // A calendar we just created holds nothing: as good as reconciled. One found in its place is listed.
      lastReconciledAt: r.created
        ? ctx.startedAt
        : encoded === stored?.remoteCalendarId
          ? (stored?.lastReconciledAt ?? null)
          : null,
    };
    await ctx.store.push.savePushCalendar(saved);
    stored = saved;
  }
  return { ...c, ref, outcome, mappings, stored, fresh: r.created, retire: r.retire ?? [] };
}
