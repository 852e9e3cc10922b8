// The fourth stage (→ Examined): where the sessions of mappings no longer desired stand now (moved out of the
// window, deleted, gone), for the calendars the planner will diff. With it, a calendar holds all the planner reads.
import type { Id } from '../domain/types.ts';
import type { PushContext } from './context.ts';
import type { Listed } from './list.ts';
import type { CalendarInput, Departed } from './plan.ts';
import { isGone } from './summary.ts';

export interface Examined extends Listed {
  /** Stored sessions of mappings no longer desired (missing: not in the store at all). */
  readonly departed: ReadonlyMap<Id, Departed>;
}

export async function lookUpDeparted(
  ctx: Pick<PushContext, 'store' | 'schoolId'>,
  listed: readonly Listed[],
): Promise<Examined[]> {
  const out: Examined[] = [];
  for (const c of listed) {
    const departed = new Map<Id, Departed>();
    if (c.ref && !isGone(c.outcome) && ['ok', 'created', 'retired'].includes(c.outcome.state))
      for (const m of c.mappings.values()) {
        if (c.desired.has(m.sessionId)) continue;
        const s = await ctx.store.records.get(ctx.schoolId, 'sessions', m.sessionId, {
          includeDeleted: true,
        });
        if (s) departed.set(m.sessionId, { start: s.start, end: s.end, deleted: Boolean(s.meta.deletedAt) });
      }
    out.push({ ...c, departed });
  }
  return out;
}

/** The planner's view of a calendar. */
export function planInput(c: Examined): CalendarInput {
  return {
    key: c.spec.key,
    state: c.outcome.state,
    ref: c.ref,
    failure: c.outcome.failure,
    desired: c.desired,
    mappings: c.mappings,
    listing: c.listing,
    departed: c.departed,
  };
}
